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

const int kRate = 16000;
const size_t kFrame = kRate / 100;  // 10 ms, the only chunk size the library takes

[[noreturn]] void fail(const std::string& message) {
    std::fprintf(stderr, "aec_webrtc: %s\n", message.c_str());
    std::exit(1);
}

uint32_t le32(const unsigned char* p) { return p[0] | p[1] << 8 | p[2] << 16 | static_cast<uint32_t>(p[3]) << 24; }
uint16_t le16(const unsigned char* p) { return static_cast<uint16_t>(p[0] | p[1] << 8); }

// The samples of a 16 kHz mono 16-bit PCM WAV, as floats in [-1, 1); anything else is refused, naming the file
// and what is wrong with it.
std::vector<float> read_wav(const std::string& path) {
    FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) fail(path + ": cannot open: " + std::strerror(errno));
    std::vector<unsigned char> bytes;
    unsigned char buffer[65536];
    size_t n;
    while ((n = std::fread(buffer, 1, sizeof buffer, f)) > 0) bytes.insert(bytes.end(), buffer, buffer + n);
    std::fclose(f);
    if (bytes.size() < 12 || std::memcmp(bytes.data(), "RIFF", 4) != 0 || std::memcmp(bytes.data() + 8, "WAVE", 4) != 0)
        fail(path + ": not a RIFF/WAVE file");
    bool have_format = false;
    size_t pos = 12;
    while (pos + 8 <= bytes.size()) {
        const unsigned char* chunk = bytes.data() + pos;
        size_t size = le32(chunk + 4);
        size_t body = pos + 8;
        if (std::memcmp(chunk, "fmt ", 4) == 0) {
            if (size < 16 || body + 16 > bytes.size()) fail(path + ": truncated fmt chunk");
            const unsigned char* fmt = bytes.data() + body;
            if (le16(fmt) != 1) fail(path + ": format tag " + std::to_string(le16(fmt)) + ", expected 1 (plain PCM)");
            if (le16(fmt + 2) != 1) fail(path + ": " + std::to_string(le16(fmt + 2)) + " channels, expected 1 (mono)");
            if (le32(fmt + 4) != kRate) fail(path + ": " + std::to_string(le32(fmt + 4)) + " Hz, expected 16000");
            if (le16(fmt + 14) != 16) fail(path + ": " + std::to_string(le16(fmt + 14)) + " bits per sample, expected 16");
            have_format = true;
        } else if (std::memcmp(chunk, "data", 4) == 0) {
            if (!have_format) fail(path + ": data chunk before the fmt chunk");
            size_t available = bytes.size() - body;
            if (size > available) size = available - available % 2;  // a stream whose header kept the placeholder size
            std::vector<float> samples(size / 2);
            for (size_t i = 0; i < samples.size(); ++i)
                samples[i] = static_cast<int16_t>(le16(bytes.data() + body + 2 * i)) / 32768.0f;
            return samples;
        }
        pos = body + size + (size & 1);
    }
    fail(path + ": no data chunk");
}

void write_wav(const std::string& path, const std::vector<float>& samples) {
    std::vector<unsigned char> bytes(44 + 2 * samples.size());
    auto put32 = [&](size_t at, uint32_t v) { for (int i = 0; i < 4; ++i) bytes[at + i] = (v >> (8 * i)) & 0xff; };
    auto put16 = [&](size_t at, uint16_t v) { bytes[at] = v & 0xff; bytes[at + 1] = v >> 8; };
    std::memcpy(&bytes[0], "RIFF", 4);
    put32(4, static_cast<uint32_t>(bytes.size() - 8));
    std::memcpy(&bytes[8], "WAVEfmt ", 8);
    put32(16, 16);
    put16(20, 1);
    put16(22, 1);
    put32(24, kRate);
    put32(28, kRate * 2);
    put16(32, 2);
    put16(34, 16);
    std::memcpy(&bytes[36], "data", 4);
    put32(40, static_cast<uint32_t>(2 * samples.size()));
    for (size_t i = 0; i < samples.size(); ++i) {
        float v = samples[i] * 32768.0f;
        int16_t s = v >= 32767.0f ? 32767 : v <= -32768.0f ? -32768 : static_cast<int16_t>(v < 0 ? v - 0.5f : v + 0.5f);
        put16(44 + 2 * i, static_cast<uint16_t>(s));
    }
    FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) fail(path + ": cannot create: " + std::strerror(errno));
    bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
    ok = std::fclose(f) == 0 && ok;
    if (!ok) fail(path + ": write failed");
}

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
