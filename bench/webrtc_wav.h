// What bench/aec_webrtc.cc and bench/ns_webrtc.cc share: 16 kHz mono 16-bit PCM WAV files read and written as
// floats in [-1, 1), and an error that names the program and exits. Each program defines program_name() before
// including this header. Bench-only, header-only (the programs are built each with one g++ command).
#ifndef HARK_BENCH_WEBRTC_WAV_H
#define HARK_BENCH_WEBRTC_WAV_H

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

const int kRate = 16000;
const size_t kFrame = kRate / 100;  // 10 ms, the only chunk size the library takes

[[noreturn]] void fail(const std::string& message) {
    std::fprintf(stderr, "%s: %s\n", program_name(), message.c_str());
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
    bool read_error = std::ferror(f) != 0;
    std::fclose(f);
    if (read_error) fail(path + ": read failed");
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

}  // namespace

#endif
