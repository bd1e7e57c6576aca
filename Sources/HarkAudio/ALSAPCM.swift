import CALSA
import Foundation

/// One open, configured alsa-lib PCM (s16le, interleaved): the shared part of `ALSACapture` and
/// `ALSAPlayback`. Closed in `deinit`.
/// The corresponding C functions are `snd_pcm_open`/`snd_pcm_open_lconf`, `snd_pcm_set_params`,
/// `snd_pcm_recover` and `snd_pcm_close`.
final class ALSAPCM: @unchecked Sendable {
    // @unchecked: `handle` is used by one thread at a time (the owner's); only `xruns`, which another
    // thread may read while the owner reads or writes, is shared, and it is guarded by `lock`.
    let device: String
    let format: PCMFormat
    let handle: OpaquePointer
    /// The ring buffer and period alsa-lib chose for the requested latency, in frames.
    let bufferFrames: Int
    let periodFrames: Int
    /// Over- and underruns recovered from so far, each with the audio it cost.
    var xruns: [ALSAXrun] {
        lock.lock()
        defer { lock.unlock() }
        return recovered
    }
    var xrunCount: Int { xruns.count }
    private let lock = NSLock()
    private var recovered: [ALSAXrun] = []
    /// The clock the kernel stamps this PCM's trigger times with (alsa-lib asks for the monotonic one on
    /// current kernels; older setups use the wall clock).
    private let stampClock: clockid_t
    private let stream: snd_pcm_stream_t
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
        var buffer: snd_pcm_uframes_t = 0
        var period: snd_pcm_uframes_t = 0
        _ = snd_pcm_get_params(pcm, &buffer, &period)
        bufferFrames = Int(buffer)
        periodFrames = Int(period)
        stampClock = Self.stampClock(pcm)
        self.stream = stream
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
        if code == -EPIPE || code == -ESTRPIPE {
            let xrun = measure(suspended: code == -ESTRPIPE)
            lock.lock()
            recovered.append(xrun)
            lock.unlock()
        }
        ALSAError.beginCall()
        try ALSAError.check(snd_pcm_recover(handle, code, 1), "snd_pcm_recover", device: device,
                            message: "could not recover from \(ALSAError.strerror(code))")
    }

    /// What the xrun just reported cost, read from the PCM's status before the recovery resets it.
    /// The kernel stops the stream at the xrun and stamps that moment (the trigger time). A capture loses
    /// the unread audio in its buffer (the recovery drops it) and everything the card heard from then until
    /// the stream runs again; a playback goes silent from then until it has audio again.
    /// The corresponding C functions are `snd_pcm_status`, `snd_pcm_status_get_trigger_htstamp` and
    /// `snd_pcm_status_get_avail`.
    private func measure(suspended: Bool) -> ALSAXrun {
        let at = ContinuousClock.now
        guard !suspended else { return ALSAXrun(at: at, seconds: nil, suspended: true) }
        var status: OpaquePointer?
        guard snd_pcm_status_malloc(&status) >= 0, let status else { return ALSAXrun(at: at, seconds: nil) }
        defer { snd_pcm_status_free(status) }
        guard snd_pcm_status(handle, status) >= 0 else { return ALSAXrun(at: at, seconds: nil) }
        var trigger = timespec()
        snd_pcm_status_get_trigger_htstamp(status, &trigger)
        var now = timespec()
        clock_gettime(stampClock, &now)
        let stopped = Double(now.tv_sec - trigger.tv_sec) + Double(now.tv_nsec - trigger.tv_nsec) / 1e9
        // No stamp (some plugins give none) or one from another clock: the cost is unknown, not made up.
        guard trigger.tv_sec != 0 || trigger.tv_nsec != 0, stopped >= 0, stopped < 3_600 else { return ALSAXrun(at: at, seconds: nil) }
        let buffered = stream == SND_PCM_STREAM_CAPTURE
            ? Double(min(Int(snd_pcm_status_get_avail(status)), bufferFrames)) / Double(format.sampleRate) : 0
        return ALSAXrun(at: at, seconds: buffered + stopped)
    }

    /// The clock of the PCM's timestamps, as its software parameters say.
    /// The corresponding C functions are `snd_pcm_sw_params_current` and `snd_pcm_sw_params_get_tstamp_type`.
    private static func stampClock(_ pcm: OpaquePointer) -> clockid_t {
        var params: OpaquePointer?
        guard snd_pcm_sw_params_malloc(&params) >= 0, let params else { return CLOCK_MONOTONIC }
        defer { snd_pcm_sw_params_free(params) }
        var type = SND_PCM_TSTAMP_TYPE_MONOTONIC
        guard snd_pcm_sw_params_current(pcm, params) >= 0, snd_pcm_sw_params_get_tstamp_type(params, &type) >= 0 else { return CLOCK_MONOTONIC }
        switch type {
        case SND_PCM_TSTAMP_TYPE_GETTIMEOFDAY: return CLOCK_REALTIME
        case SND_PCM_TSTAMP_TYPE_MONOTONIC_RAW: return CLOCK_MONOTONIC_RAW
        default: return CLOCK_MONOTONIC
        }
    }
}

/// One over- or underrun that `ALSACapture` or `ALSAPlayback` recovered from.
public struct ALSAXrun: Sendable, Equatable {
    /// When it was recovered from (the loss ends about then and began `seconds` earlier).
    public var at: ContinuousClock.Instant
    /// The audio it cost: for a capture, the seconds of sound that were never delivered (the unread buffer
    /// the recovery dropped plus the time the stream stood still); for a playback, the seconds of silence
    /// between running dry and being recovered. nil when the device gave no timestamp to measure by.
    public var seconds: Double?
    /// A suspend (power management) rather than an over- or underrun.
    public var suspended = false

    public init(at: ContinuousClock.Instant, seconds: Double?, suspended: Bool = false) {
        self.at = at
        self.seconds = seconds
        self.suspended = suspended
    }
}

extension [ALSAXrun] {
    /// The audio all of them cost, in seconds (those that could not be measured count as 0).
    public var lostSeconds: Double { reduce(0) { $0 + ($1.seconds ?? 0) } }

    /// "3 (1.24 s lost)", "0", or "2 (≥ 0.30 s lost; 1 unmeasured)".
    public func summary(lost word: String = "lost") -> String {
        guard !isEmpty else { return "0" }
        let unmeasured = filter { $0.seconds == nil }.count
        let total = String(format: "%.2f", lostSeconds)
        return unmeasured == 0 ? "\(count) (\(total) s \(word))" : "\(count) (≥ \(total) s \(word); \(unmeasured) unmeasured)"
    }
}
