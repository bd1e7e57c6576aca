// libopus for the rooms' audio (HarkRooms). Its encoder and decoder controls are variadic macros over
// opus_encoder_ctl/opus_decoder_ctl, which Swift cannot call, so each control Hark uses is a small inline
// function here.
#include <opus.h>

static inline int hark_opus_set_bitrate(OpusEncoder *encoder, opus_int32 bitsPerSecond) {
    return opus_encoder_ctl(encoder, OPUS_SET_BITRATE(bitsPerSecond));
}

static inline int hark_opus_set_complexity(OpusEncoder *encoder, opus_int32 complexity) {
    return opus_encoder_ctl(encoder, OPUS_SET_COMPLEXITY(complexity));
}
