#include "CLWS.h"

int clws_pre(void) { return LWS_PRE; }
