// What Swift cannot call or implement itself: variadic callbacks (sphinxbase's log callback, ALSA's
// error handler). Every symbol is prefixed `chark_`.
#ifndef CHARK_SHIM_H
#define CHARK_SHIM_H

#include <stddef.h>

/// Silences sphinxbase's logging (its callback is variadic, so it is installed from C).
void chark_sphinx_silence(void);

/// Routes alsa-lib's error messages (a variadic handler) into a per-thread buffer instead of stderr.
/// Idempotent and thread-safe.
void chark_alsa_capture_errors(void);

/// The last alsa-lib message captured on the calling thread ("" if none), and clears it.
/// Copies at most `size - 1` bytes into `buffer`.
void chark_alsa_take_last_error(char *buffer, size_t size);

#endif
