// Hark's GPIO calls, over whichever libgpiod the build finds: v1 (1.6, Debian 12) or v2 (2.x, Debian 13).
// The v1 API (gpiod_chip_get_line, gpiod_line_request_*) is gone from v2 (line settings, line requests, edge
// event buffers), so HarkDevices calls only the hark_gpio_* functions below, which say the same thing in both.
// Chosen at compile time from the header itself: v1's gpiod.h defines GPIOD_LINE_BULK_MAX_LINES (the line bulk
// v2 dropped). Every function returns NULL or a negative number with errno set on failure, as libgpiod does.
#include <gpiod.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(GPIOD_LINE_BULK_MAX_LINES)
#define HARK_GPIOD_V1 1
#else
#define HARK_GPIOD_V1 0
#endif

/// The libgpiod API this build uses: 1 or 2.
static inline int hark_gpio_api_version(void) { return HARK_GPIOD_V1 ? 1 : 2; }

/// The longest name or label the kernel keeps, plus its terminator (GPIO_MAX_NAME_SIZE is 32).
#define HARK_GPIO_NAME_SIZE 48

/// An open chip: libgpiod's handle and what it said about itself when opened.
typedef struct hark_gpio_chip {
    struct gpiod_chip *chip;
    char name[HARK_GPIO_NAME_SIZE];
    char label[HARK_GPIO_NAME_SIZE];
    unsigned int num_lines;
} hark_gpio_chip;

/// One line as the kernel describes it now (gpioinfo's columns). Empty strings when it has no name or consumer.
typedef struct hark_gpio_line_info {
    char name[HARK_GPIO_NAME_SIZE];
    char consumer[HARK_GPIO_NAME_SIZE];
    bool output;
    bool active_low;
    bool used;
} hark_gpio_line_info;

/// One requested line: an output, or an input with events on both edges.
typedef struct hark_gpio_request {
#if HARK_GPIOD_V1
    struct gpiod_line *line;
#else
    struct gpiod_line_request *request;
    struct gpiod_edge_event_buffer *events;
#endif
    unsigned int offset;
} hark_gpio_request;

static inline void hark_gpio_copy(char *to, const char *from) {
    if (!from) from = "";
    strncpy(to, from, HARK_GPIO_NAME_SIZE - 1);
    to[HARK_GPIO_NAME_SIZE - 1] = 0;
}

/// Opens the chip at `path` (`/dev/gpiochip0`). v1: gpiod_chip_open; v2: gpiod_chip_open, gpiod_chip_get_info.
static inline hark_gpio_chip *hark_gpio_chip_open(const char *path) {
    hark_gpio_chip *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->chip = gpiod_chip_open(path);
    if (!c->chip) { int e = errno; free(c); errno = e; return NULL; }
#if HARK_GPIOD_V1
    hark_gpio_copy(c->name, gpiod_chip_name(c->chip));
    hark_gpio_copy(c->label, gpiod_chip_label(c->chip));
    c->num_lines = gpiod_chip_num_lines(c->chip);
#else
    struct gpiod_chip_info *info = gpiod_chip_get_info(c->chip);
    if (!info) { int e = errno; gpiod_chip_close(c->chip); free(c); errno = e; return NULL; }
    hark_gpio_copy(c->name, gpiod_chip_info_get_name(info));
    hark_gpio_copy(c->label, gpiod_chip_info_get_label(info));
    c->num_lines = (unsigned int)gpiod_chip_info_get_num_lines(info);
    gpiod_chip_info_free(info);
#endif
    return c;
}

/// Closes a chip. v1: every line requested from it must be released first (they live in the chip's memory).
static inline void hark_gpio_chip_close(hark_gpio_chip *c) {
    if (!c) return;
    gpiod_chip_close(c->chip);
    free(c);
}

/// Reads one line's information afresh. v1: gpiod_chip_get_line, gpiod_line_update and the gpiod_line_*
/// getters; v2: gpiod_chip_get_line_info and the gpiod_line_info_* getters.
static inline int hark_gpio_line_info_get(hark_gpio_chip *c, unsigned int offset, hark_gpio_line_info *out) {
    memset(out, 0, sizeof *out);
#if HARK_GPIOD_V1
    struct gpiod_line *line = gpiod_chip_get_line(c->chip, offset);
    if (!line || gpiod_line_update(line) < 0) return -1;
    hark_gpio_copy(out->name, gpiod_line_name(line));
    hark_gpio_copy(out->consumer, gpiod_line_consumer(line));
    out->output = gpiod_line_direction(line) == GPIOD_LINE_DIRECTION_OUTPUT;
    out->active_low = gpiod_line_active_state(line) == GPIOD_LINE_ACTIVE_STATE_LOW;
    out->used = gpiod_line_is_used(line);
#else
    struct gpiod_line_info *info = gpiod_chip_get_line_info(c->chip, offset);
    if (!info) return -1;
    hark_gpio_copy(out->name, gpiod_line_info_get_name(info));
    hark_gpio_copy(out->consumer, gpiod_line_info_get_consumer(info));
    out->output = gpiod_line_info_get_direction(info) == GPIOD_LINE_DIRECTION_OUTPUT;
    out->active_low = gpiod_line_info_is_active_low(info);
    out->used = gpiod_line_info_is_used(info);
    gpiod_line_info_free(info);
#endif
    return 0;
}

/// The offset of the line called `name`, or -1 with errno ENOENT when the chip has none.
/// v1: gpiod_chip_find_line; v2: gpiod_chip_get_line_offset_from_name.
static inline int hark_gpio_find_line(hark_gpio_chip *c, const char *name) {
    errno = 0;
#if HARK_GPIOD_V1
    struct gpiod_line *line = gpiod_chip_find_line(c->chip, name);
    if (!line) { if (errno == 0) errno = ENOENT; return -1; }
    return (int)gpiod_line_offset(line);
#else
    int offset = gpiod_chip_get_line_offset_from_name(c->chip, name);
    if (offset < 0 && errno == 0) errno = ENOENT;
    return offset;
#endif
}

#if !HARK_GPIOD_V1
/// v2: one line with `settings`, labelled `consumer`. gpiod_chip_request_lines and its configuration objects.
static inline struct gpiod_line_request *hark_gpio_request_v2(hark_gpio_chip *c, unsigned int offset, const char *consumer,
                                                            struct gpiod_line_settings *settings) {
    struct gpiod_line_request *request = NULL;
    struct gpiod_line_config *lines = gpiod_line_config_new();
    struct gpiod_request_config *config = gpiod_request_config_new();
    if (lines && config && gpiod_line_config_add_line_settings(lines, &offset, 1, settings) == 0) {
        gpiod_request_config_set_consumer(config, consumer);
        request = gpiod_chip_request_lines(c->chip, config, lines);
    }
    int e = errno;
    gpiod_request_config_free(config);
    gpiod_line_config_free(lines);
    errno = e;
    return request;
}
#endif

/// Requests line `offset` as an output driven to `initial` (logical: active-low inverts it).
/// v1: gpiod_line_request_output_flags; v2: gpiod_chip_request_lines with output settings.
static inline hark_gpio_request *hark_gpio_request_output(hark_gpio_chip *c, unsigned int offset, const char *consumer,
                                                          bool active_low, bool initial) {
    hark_gpio_request *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    r->offset = offset;
#if HARK_GPIOD_V1
    r->line = gpiod_chip_get_line(c->chip, offset);
    int flags = active_low ? GPIOD_LINE_REQUEST_FLAG_ACTIVE_LOW : 0;
    if (r->line && gpiod_line_request_output_flags(r->line, consumer, flags, initial ? 1 : 0) == 0) return r;
#else
    struct gpiod_line_settings *settings = gpiod_line_settings_new();
    if (settings && gpiod_line_settings_set_direction(settings, GPIOD_LINE_DIRECTION_OUTPUT) == 0
        && gpiod_line_settings_set_output_value(settings, initial ? GPIOD_LINE_VALUE_ACTIVE : GPIOD_LINE_VALUE_INACTIVE) == 0) {
        gpiod_line_settings_set_active_low(settings, active_low);
        r->request = hark_gpio_request_v2(c, offset, consumer, settings);
    }
    int e = errno;
    gpiod_line_settings_free(settings);
    errno = e;
    if (r->request) return r;
#endif
    int e2 = errno;
    free(r);
    errno = e2;
    return NULL;
}

/// Requests line `offset` as an input with events on both edges.
/// v1: gpiod_line_request_both_edges_events_flags; v2: gpiod_chip_request_lines with edge detection, and an
/// edge event buffer of one.
static inline hark_gpio_request *hark_gpio_request_input(hark_gpio_chip *c, unsigned int offset, const char *consumer,
                                                         bool active_low) {
    hark_gpio_request *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    r->offset = offset;
#if HARK_GPIOD_V1
    r->line = gpiod_chip_get_line(c->chip, offset);
    int flags = active_low ? GPIOD_LINE_REQUEST_FLAG_ACTIVE_LOW : 0;
    if (r->line && gpiod_line_request_both_edges_events_flags(r->line, consumer, flags) == 0) return r;
#else
    struct gpiod_line_settings *settings = gpiod_line_settings_new();
    r->events = gpiod_edge_event_buffer_new(1);
    if (settings && r->events && gpiod_line_settings_set_direction(settings, GPIOD_LINE_DIRECTION_INPUT) == 0
        && gpiod_line_settings_set_edge_detection(settings, GPIOD_LINE_EDGE_BOTH) == 0) {
        gpiod_line_settings_set_active_low(settings, active_low);
        r->request = hark_gpio_request_v2(c, offset, consumer, settings);
    }
    int e = errno;
    gpiod_line_settings_free(settings);
    if (!r->request) gpiod_edge_event_buffer_free(r->events);
    errno = e;
    if (r->request) return r;
#endif
    int e2 = errno;
    free(r);
    errno = e2;
    return NULL;
}

/// Gives the line back to the kernel. v1: gpiod_line_release; v2: gpiod_line_request_release.
static inline void hark_gpio_release(hark_gpio_request *r) {
    if (!r) return;
#if HARK_GPIOD_V1
    gpiod_line_release(r->line);
#else
    gpiod_line_request_release(r->request);
    gpiod_edge_event_buffer_free(r->events);
#endif
    free(r);
}

/// The line's logical value: 1 active, 0 inactive, -1 on failure.
/// v1: gpiod_line_get_value; v2: gpiod_line_request_get_value.
static inline int hark_gpio_get_value(hark_gpio_request *r) {
#if HARK_GPIOD_V1
    return gpiod_line_get_value(r->line);
#else
    int value = (int)gpiod_line_request_get_value(r->request, r->offset);
    return value < 0 ? -1 : (value == GPIOD_LINE_VALUE_ACTIVE ? 1 : 0);
#endif
}

/// Drives the line to `value` (logical). v1: gpiod_line_set_value; v2: gpiod_line_request_set_value.
static inline int hark_gpio_set_value(hark_gpio_request *r, bool value) {
#if HARK_GPIOD_V1
    return gpiod_line_set_value(r->line, value ? 1 : 0);
#else
    return gpiod_line_request_set_value(r->request, r->offset, value ? GPIOD_LINE_VALUE_ACTIVE : GPIOD_LINE_VALUE_INACTIVE);
#endif
}

/// Waits up to `timeout_ns` for an edge: 1 when one is queued, 0 on time-out, -1 on failure.
/// v1: gpiod_line_event_wait; v2: gpiod_line_request_wait_edge_events.
static inline int hark_gpio_wait_edge(hark_gpio_request *r, int64_t timeout_ns) {
#if HARK_GPIOD_V1
    struct timespec wait = { .tv_sec = timeout_ns / 1000000000, .tv_nsec = timeout_ns % 1000000000 };
    return gpiod_line_event_wait(r->line, &wait);
#else
    return gpiod_line_request_wait_edge_events(r->request, timeout_ns);
#endif
}

/// Reads the next queued edge: whether the line became active, and the kernel's timestamp in nanoseconds.
/// Returns 0, or -1 on failure. v1: gpiod_line_event_read; v2: gpiod_line_request_read_edge_events.
static inline int hark_gpio_read_edge(hark_gpio_request *r, bool *rising, int64_t *timestamp_ns) {
#if HARK_GPIOD_V1
    struct gpiod_line_event event;
    if (gpiod_line_event_read(r->line, &event) < 0) return -1;
    *rising = event.event_type == GPIOD_LINE_EVENT_RISING_EDGE;
    *timestamp_ns = (int64_t)event.ts.tv_sec * 1000000000 + event.ts.tv_nsec;
#else
    int read = gpiod_line_request_read_edge_events(r->request, r->events, 1);
    if (read < 1) { if (read == 0) errno = EAGAIN; return -1; }
    struct gpiod_edge_event *event = gpiod_edge_event_buffer_get_event(r->events, 0);
    if (!event) return -1;
    *rising = gpiod_edge_event_get_event_type(event) == GPIOD_EDGE_EVENT_RISING_EDGE;
    *timestamp_ns = (int64_t)gpiod_edge_event_get_timestamp_ns(event);
#endif
    return 0;
}
