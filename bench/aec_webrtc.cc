// Debian's WebRTC echo canceller (libwebrtc-audio-processing, bookworm's 0.3 API) over two recordings, for
// bench/aec.py to measure beside `hark echo-cancel` (speexdsp) on the same signals. Bench-only: Hark does not
// link it.
//
// usage: aec_webrtc --played FAR.wav --microphone MIC.wav --output OUT.wav
//                   [--suppression low|moderate|high] [--delay MS] [--extended-filter] [--delay-agnostic]
//                   [--mobile speakerphone|loud-speakerphone]
//
// Both inputs must be 16 kHz mono 16-bit PCM WAV (bench/aec.py writes them so); the played one is cut or padded
// with silence to the microphone's length, as `hark echo-cancel` does. The output has the microphone's length.
// Every 10 ms the played frame goes to ProcessReverseStream, then the microphone frame to ProcessStream, with
// set_stream_delay_ms(--delay) before it: the two files are in step, so the delay the library should assume
// between a played frame and its echo is what the echo path adds (0 unless told). Only the echo canceller is
// enabled (no noise suppression, gain control or high-pass filter): its non-linear processor, the residual echo
// suppressor whose aggressiveness --suppression sets, is part of it and cannot be switched off. --mobile uses
// the mobile echo canceller (AECM, fixed point) instead, in the given routing mode.
// Build: g++ -O2 -std=c++14 bench/aec_webrtc.cc $(pkg-config --cflags --libs webrtc-audio-processing)

#include <webrtc/common.h>
#include <webrtc/modules/audio_processing/include/audio_processing.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace {

const char* program_name() { return "aec_webrtc"; }

}  // namespace

#include "webrtc_wav.h"

namespace {

void check(int code, const char* call) {
    if (code != webrtc::AudioProcessing::kNoError) fail(std::string(call) + " failed with error " + std::to_string(code));
}

void usage() {
    std::fprintf(stderr,
                 "usage: aec_webrtc --played FAR.wav --microphone MIC.wav --output OUT.wav\n"
                 "                  [--suppression low|moderate|high] [--delay MS] [--extended-filter] [--delay-agnostic]\n"
                 "                  [--mobile speakerphone|loud-speakerphone]\n");
    std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
    std::string played_path, microphone_path, output_path, suppression = "moderate", mobile;
    int delay_ms = 0;
    bool extended = false, agnostic = false;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) fail(a + " needs a value");
            return argv[++i];
        };
        if (a == "--played") played_path = value();
        else if (a == "--microphone") microphone_path = value();
        else if (a == "--output") output_path = value();
        else if (a == "--suppression") suppression = value();
        else if (a == "--mobile") mobile = value();
        else if (a == "--delay") {
            std::string v = value();
            char* end = nullptr;
            long d = std::strtol(v.c_str(), &end, 10);
            if (v.empty() || *end != '\0' || d < 0 || d > 500) fail("--delay: '" + v + "' is not a whole number of milliseconds from 0 to 500");
            delay_ms = static_cast<int>(d);
        } else if (a == "--extended-filter") extended = true;
        else if (a == "--delay-agnostic") agnostic = true;
        else if (a == "-h" || a == "--help") usage();
        else fail("unknown argument '" + a + "' (--help lists them)");
    }
    if (played_path.empty() || microphone_path.empty() || output_path.empty())
        fail("--played, --microphone and --output are all required");

    webrtc::EchoCancellation::SuppressionLevel level;
    if (suppression == "low") level = webrtc::EchoCancellation::kLowSuppression;
    else if (suppression == "moderate") level = webrtc::EchoCancellation::kModerateSuppression;
    else if (suppression == "high") level = webrtc::EchoCancellation::kHighSuppression;
    else fail("--suppression: '" + suppression + "' is not low, moderate or high");
    webrtc::EchoControlMobile::RoutingMode routing = webrtc::EchoControlMobile::kSpeakerphone;
    if (mobile == "loud-speakerphone") routing = webrtc::EchoControlMobile::kLoudSpeakerphone;
    else if (!mobile.empty() && mobile != "speakerphone") fail("--mobile: '" + mobile + "' is not speakerphone or loud-speakerphone");
    if (!mobile.empty() && (extended || agnostic)) fail("--extended-filter and --delay-agnostic apply to the full canceller, not --mobile");

    std::vector<float> microphone = read_wav(microphone_path);
    std::vector<float> played = read_wav(played_path);
    const size_t length = microphone.size();
    played.resize(length, 0.0f);

    webrtc::Config config;
    config.Set<webrtc::ExtendedFilter>(new webrtc::ExtendedFilter(extended));
    config.Set<webrtc::DelayAgnostic>(new webrtc::DelayAgnostic(agnostic));
    std::unique_ptr<webrtc::AudioProcessing> apm(webrtc::AudioProcessing::Create(config));
    if (!apm) fail("webrtc::AudioProcessing::Create returned nothing");
    webrtc::ProcessingConfig streams;
    streams.input_stream() = webrtc::StreamConfig(kRate, 1);
    streams.output_stream() = webrtc::StreamConfig(kRate, 1);
    streams.reverse_input_stream() = webrtc::StreamConfig(kRate, 1);
    streams.reverse_output_stream() = webrtc::StreamConfig(kRate, 1);
    check(apm->Initialize(streams), "AudioProcessing::Initialize");
    if (mobile.empty()) {
        check(apm->echo_cancellation()->set_suppression_level(level), "EchoCancellation::set_suppression_level");
        check(apm->echo_cancellation()->Enable(true), "EchoCancellation::Enable");
    } else {
        check(apm->echo_control_mobile()->set_routing_mode(routing), "EchoControlMobile::set_routing_mode");
        check(apm->echo_control_mobile()->Enable(true), "EchoControlMobile::Enable");
    }

    // Whole 10 ms frames; the last partial one is padded with silence and cut off again.
    size_t frames = (microphone.size() + kFrame - 1) / kFrame;
    microphone.resize(frames * kFrame, 0.0f);
    played.resize(frames * kFrame, 0.0f);
    std::vector<float> output(frames * kFrame);
    std::vector<float> scratch(kFrame);
    webrtc::StreamConfig mono(kRate, 1);
    for (size_t k = 0; k < frames; ++k) {
        const float* far[1] = {&played[k * kFrame]};
        float* far_out[1] = {scratch.data()};
        check(apm->ProcessReverseStream(far, mono, mono, far_out), "AudioProcessing::ProcessReverseStream");
        check(apm->set_stream_delay_ms(delay_ms), "AudioProcessing::set_stream_delay_ms");
        const float* near[1] = {&microphone[k * kFrame]};
        float* near_out[1] = {&output[k * kFrame]};
        check(apm->ProcessStream(near, mono, mono, near_out), "AudioProcessing::ProcessStream");
    }
    output.resize(length);
    write_wav(output_path, output);
    return 0;
}
