#include "CHarkShim.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <pthread.h>

#include <sphinxbase/err.h>
#include <alsa/asoundlib.h>

static void chark_sphinx_discard(void *user_data, err_lvl_t level, const char *format, ...) {
    (void)user_data; (void)level; (void)format;
}

void chark_sphinx_silence(void) {
    err_set_logfp(NULL);
    err_set_callback(chark_sphinx_discard, NULL);
}

static __thread char chark_alsa_last[512];

static void chark_alsa_handler(const char *file, int line, const char *function, int err, const char *fmt, ...) {
    (void)file; (void)line;
    char message[400];
    va_list args;
    va_start(args, fmt);
    vsnprintf(message, sizeof message, fmt, args);
    va_end(args);
    if (err != 0) {
        snprintf(chark_alsa_last, sizeof chark_alsa_last, "%s: %s (%s)", function ? function : "alsa", message, snd_strerror(err));
    } else {
        snprintf(chark_alsa_last, sizeof chark_alsa_last, "%s: %s", function ? function : "alsa", message);
    }
}

static pthread_once_t chark_alsa_once = PTHREAD_ONCE_INIT;
static void chark_alsa_install(void) { snd_lib_error_set_handler(chark_alsa_handler); }

void chark_alsa_capture_errors(void) { pthread_once(&chark_alsa_once, chark_alsa_install); }

void chark_alsa_take_last_error(char *buffer, size_t size) {
    if (size == 0) return;
    snprintf(buffer, size, "%s", chark_alsa_last);
    chark_alsa_last[0] = '\0';
}
