#include <speex/speex_resampler.h>
#include <speex/speex_preprocess.h>
#include <speex/speex_jitter.h>
#include <speex/speex_echo.h>
