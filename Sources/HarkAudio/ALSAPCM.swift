import CALSA
import Foundation

/// One open, configured alsa-lib PCM (s16le, interleaved): the shared part of `ALSACapture` and
/// `ALSAPlayback`. Closed in `deinit`.
/// The corresponding C functions are `snd_pcm_open`/`snd_pcm_open_lconf`, `snd_pcm_set_params`,
/// `snd_pcm_recover` and `snd_pcm_close`.
final class ALSAPCM {
    let device: String
    let format: PCMFormat
    let handle: OpaquePointer
    /// Over- and underruns recovered from so far.
    private(set) var xrunCount = 0
    /// Kept alive while the PCM is open: the PCM was built from it.
    private let configuration: ALSAConfiguration?

    init(device: String, stream: snd_pcm_stream_t, format: PCMFormat, latency: Double, configFile: String?) throws(ALSAError) {
        let configuration = try configFile.map { (path) throws(ALSAError) in try ALSAConfiguration(loading: path, for: device) }
        guard format.sampleRate > 0, format.channels > 0 else {
            throw ALSAError(device: device, function: "snd_pcm_set_params", code: -EINVAL, message: "invalid format \(format)")
        }
        ALSAError.beginCall()
        var pcm: OpaquePointer?
        // Non-blocking open: a blocking open of a busy hw device waits for it to be free instead of failing.
        let opened = configuration.map { snd_pcm_open_lconf(&pcm, device, stream, SND_PCM_NONBLOCK, $0.handle) }
            ?? snd_pcm_open(&pcm, device, stream, SND_PCM_NONBLOCK)
        guard opened >= 0, let pcm else {
            throw ALSAError.open(device: device, code: opened < 0 ? opened : -ENODEV, configFile: configFile)
        }
        do {
            try ALSAError.check(snd_pcm_nonblock(pcm, 0), "snd_pcm_nonblock", device: device)
            try Self.configure(pcm, device: device, format: format, latency: latency)
        } catch {
            snd_pcm_close(pcm)
            throw error
        }
        handle = pcm
        self.device = device
        self.format = format
        self.configuration = configuration
    }

    deinit { snd_pcm_close(handle) }

    /// Checks s16le, the channel count and the rate one by one (so the error says which is refused), then
    /// lets `snd_pcm_set_params` choose buffer and period sizes for the requested latency.
    private static func configure(_ pcm: OpaquePointer, device: String, format: PCMFormat, latency: Double) throws(ALSAError) {
        var params: OpaquePointer?
        try ALSAError.check(snd_pcm_hw_params_malloc(&params), "snd_pcm_hw_params_malloc", device: device)
        guard let params else { throw ALSAError(device: device, function: "snd_pcm_hw_params_malloc", code: -ENOMEM, message: "out of memory") }
        defer { snd_pcm_hw_params_free(params) }
        try ALSAError.check(snd_pcm_hw_params_any(pcm, params), "snd_pcm_hw_params_any", device: device)
        try ALSAError.check(snd_pcm_hw_params_test_access(pcm, params, SND_PCM_ACCESS_RW_INTERLEAVED), "snd_pcm_hw_params_test_access",
                            device: device, message: "unsupported access: the device cannot do interleaved reads/writes (try plughw: or default)")
        try ALSAError.check(snd_pcm_hw_params_test_format(pcm, params, SND_PCM_FORMAT_S16_LE), "snd_pcm_hw_params_test_format",
                            device: device, message: "unsupported format: the device does not take signed 16-bit little-endian samples (try plughw: or default)")
        var low: UInt32 = 0
        var high: UInt32 = 0
        var dir: Int32 = 0
        if snd_pcm_hw_params_test_channels(pcm, params, UInt32(format.channels)) < 0 {
            _ = snd_pcm_hw_params_get_channels_min(params, &low)
            _ = snd_pcm_hw_params_get_channels_max(params, &high)
            throw ALSAError(device: device, function: "snd_pcm_hw_params_test_channels", code: -EINVAL,
                            message: "unsupported channel count \(format.channels): the device takes \(low)…\(high) (try plughw: or default)",
                            libraryMessage: ALSAError.takeLibraryMessage())
        }
        if snd_pcm_hw_params_test_rate(pcm, params, UInt32(format.sampleRate), 0) < 0 {
            _ = snd_pcm_hw_params_get_rate_min(params, &low, &dir)
            _ = snd_pcm_hw_params_get_rate_max(params, &high, &dir)
            throw ALSAError(device: device, function: "snd_pcm_hw_params_test_rate", code: -EINVAL,
                            message: "unsupported rate \(format.sampleRate) Hz: the device takes \(low)…\(high) Hz (try plughw: or default)",
                            libraryMessage: ALSAError.takeLibraryMessage())
        }
        let micros = UInt32(max(1_000, min(2_000_000, Int(latency * 1_000_000))))
        try ALSAError.check(snd_pcm_set_params(pcm, SND_PCM_FORMAT_S16_LE, SND_PCM_ACCESS_RW_INTERLEAVED,
                                               UInt32(format.channels), UInt32(format.sampleRate), 1, micros),
                            "snd_pcm_set_params", device: device,
                            message: "unsupported parameters: \(format), s16le, \(micros) µs latency")
    }

    /// Recovers from an overrun (capture), underrun (playback), a suspend or an interrupted call;
    /// throws anything else. The corresponding C function is `snd_pcm_recover`.
    func recover(from code: Int32, in function: String) throws(ALSAError) {
        if code == -ENODEV || code == -EBADFD {
            throw ALSAError(device: device, function: function, code: code,
                            message: "the device is gone (unplugged or closed)", libraryMessage: ALSAError.takeLibraryMessage())
        }
        guard code == -EPIPE || code == -ESTRPIPE || code == -EINTR else {
            try ALSAError.check(code, function, device: device)
            return
        }
        if code == -EPIPE || code == -ESTRPIPE { xrunCount += 1 }
        ALSAError.beginCall()
        try ALSAError.check(snd_pcm_recover(handle, code, 1), "snd_pcm_recover", device: device,
                            message: "could not recover from \(ALSAError.strerror(code))")
    }
}
