// Debian's WebRTC noise suppressor (libwebrtc-audio-processing, bookworm's 0.3 API) over recordings, for
// bench/speech_ns_webrtc.py to measure as a front end before `hark recognize` (issue 16 item 1). Bench-only:
// Hark does not link it.
//
// usage: ns_webrtc --level low|moderate|high|veryhigh [--high-pass] [--stats] IN.wav OUT.wav [IN.wav OUT.wav ...]
//        ns_webrtc --level ... [--high-pass] [--stats] --list PAIRS.tsv
//
// Every input must be 16 kHz mono 16-bit PCM WAV; each output is the same format and length. PAIRS.tsv has one
// "IN<tab>OUT" line per file (empty lines are skipped), for batches longer than a command line. Each file gets
// a fresh AudioProcessing instance, so no noise estimate carries over from one file to the next. Only the noise
// suppressor is enabled, at --level (no echo canceller, gain control, voice detection or, unless --high-pass,
// high-pass filter); audio goes through ProcessStream in 10 ms frames, the last partial one padded with
// silence and cut off again. --stats prints one JSON line to stdout: files, audio_seconds and
// process_cpu_seconds (this process's CPU time inside the frame loops only, without reading or writing files).
// Build: g++ -O2 -std=c++14 bench/ns_webrtc.cc $(pkg-config --cflags --libs webrtc-audio-processing)

#include <webrtc/common.h>
#include <webrtc/modules/audio_processing/include/audio_processing.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace {

const char* program_name() { return "ns_webrtc"; }

}  // namespace

#include "webrtc_wav.h"

namespace {

void check(int code, const std::string& path, const char* call) {
    if (code != webrtc::AudioProcessing::kNoError)
        fail(path + ": " + call + " failed with error " + std::to_string(code));
}

double cpu_seconds() {
    timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

void usage() {
    std::fprintf(stderr,
                 "usage: ns_webrtc --level low|moderate|high|veryhigh [--high-pass] [--stats] IN.wav OUT.wav [IN.wav OUT.wav ...]\n"
                 "       ns_webrtc --level low|moderate|high|veryhigh [--high-pass] [--stats] --list PAIRS.tsv\n"
                 "PAIRS.tsv: one \"IN<tab>OUT\" line per file.\n");
    std::exit(2);
}

std::vector<std::pair<std::string, std::string>> read_list(const std::string& path) {
    std::ifstream in(path);
    if (!in) fail(path + ": cannot open the list: " + std::strerror(errno));
    std::vector<std::pair<std::string, std::string>> pairs;
    std::string line;
    int number = 0;
    while (std::getline(in, line)) {
        ++number;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.empty()) continue;
        size_t tab = line.find('\t');
        if (tab == std::string::npos || tab == 0 || tab + 1 == line.size() || line.find('\t', tab + 1) != std::string::npos)
            fail(path + ":" + std::to_string(number) + ": expected \"IN<tab>OUT\", got '" + line + "'");
        pairs.emplace_back(line.substr(0, tab), line.substr(tab + 1));
    }
    return pairs;
}

}  // namespace

int main(int argc, char** argv) {
    std::string level_name, list_path;
    bool high_pass = false, stats = false;
    std::vector<std::string> paths;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) fail(a + " needs a value");
            return argv[++i];
        };
        if (a == "--level") level_name = value();
        else if (a == "--list") list_path = value();
        else if (a == "--high-pass") high_pass = true;
        else if (a == "--stats") stats = true;
        else if (a == "-h" || a == "--help") usage();
        else if (a.size() > 1 && a[0] == '-') fail("unknown option '" + a + "' (--help lists them)");
        else paths.push_back(a);
    }
    webrtc::NoiseSuppression::Level level;
    if (level_name == "low") level = webrtc::NoiseSuppression::kLow;
    else if (level_name == "moderate") level = webrtc::NoiseSuppression::kModerate;
    else if (level_name == "high") level = webrtc::NoiseSuppression::kHigh;
    else if (level_name == "veryhigh") level = webrtc::NoiseSuppression::kVeryHigh;
    else if (level_name.empty()) fail("--level is required (low, moderate, high or veryhigh)");
    else fail("--level: '" + level_name + "' is not low, moderate, high or veryhigh");

    std::vector<std::pair<std::string, std::string>> pairs;
    if (!list_path.empty()) {
        if (!paths.empty()) fail("give either --list or IN OUT pairs, not both");
        pairs = read_list(list_path);
    } else {
        if (paths.empty()) usage();
        if (paths.size() % 2 != 0) fail("'" + paths.back() + "' has no output path: files come as IN OUT pairs");
        for (size_t i = 0; i < paths.size(); i += 2) pairs.emplace_back(paths[i], paths[i + 1]);
    }

    double audio_seconds = 0, loop_cpu = 0;
    webrtc::StreamConfig mono(kRate, 1);
    for (const auto& pair : pairs) {
        const std::string& in_path = pair.first;
        std::vector<float> input = read_wav(in_path);
        const size_t length = input.size();

        webrtc::Config config;
        std::unique_ptr<webrtc::AudioProcessing> apm(webrtc::AudioProcessing::Create(config));
        if (!apm) fail("webrtc::AudioProcessing::Create returned nothing");
        webrtc::ProcessingConfig streams;
        streams.input_stream() = mono;
        streams.output_stream() = mono;
        streams.reverse_input_stream() = mono;
        streams.reverse_output_stream() = mono;
        check(apm->Initialize(streams), in_path, "AudioProcessing::Initialize");
        check(apm->noise_suppression()->set_level(level), in_path, "NoiseSuppression::set_level");
        check(apm->noise_suppression()->Enable(true), in_path, "NoiseSuppression::Enable");
        check(apm->high_pass_filter()->Enable(high_pass), in_path, "HighPassFilter::Enable");

        size_t frames = (length + kFrame - 1) / kFrame;
        input.resize(frames * kFrame, 0.0f);
        std::vector<float> output(frames * kFrame);
        double start = cpu_seconds();
        for (size_t k = 0; k < frames; ++k) {
            const float* src[1] = {&input[k * kFrame]};
            float* dest[1] = {&output[k * kFrame]};
            check(apm->ProcessStream(src, mono, mono, dest), in_path, "AudioProcessing::ProcessStream");
        }
        loop_cpu += cpu_seconds() - start;
        audio_seconds += static_cast<double>(length) / kRate;
        output.resize(length);
        write_wav(pair.second, output);
    }
    if (stats)
        std::printf("{\"files\": %zu, \"audio_seconds\": %.3f, \"process_cpu_seconds\": %.4f}\n", pairs.size(),
                    audio_seconds, loop_cpu);
    return 0;
}
