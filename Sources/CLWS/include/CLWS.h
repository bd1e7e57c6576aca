#ifndef CLWS_H
#define CLWS_H
#include <libwebsockets.h>

/// LWS_PRE: the padding lws_write needs before the payload (a macro expression Swift cannot import).
int clws_pre(void);

#endif
