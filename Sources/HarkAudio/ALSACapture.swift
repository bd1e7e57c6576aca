import CALSA

/// Records from an ALSA PCM device as interleaved s16le at the requested rate and channel count.
///
/// The device is named as alsa-lib names it: `default`, `hw:0,0`, `plughw:1,0`, or a PCM defined in
/// `configFile` (an asoundrc loaded in addition to the system configuration, so a test or a kiosk can
/// define its own devices without setting `ALSA_CONFIG_PATH`). Overruns are recovered from and counted.
/// alsa-lib's own messages go into `ALSAError.libraryMessage`, never to stderr.
/// The corresponding C functions are `snd_pcm_open`, `snd_pcm_set_params`, `snd_pcm_start`, `snd_pcm_readi` and
/// `snd_pcm_close`.
public final class ALSACapture: AudioSource {
    public let format: PCMFormat
    public let device: String
    private let pcm: ALSAPCM

    /// Opens `device` for capture.
    /// - Parameters:
    ///   - latency: the buffer length alsa-lib aims for, in seconds.
    ///   - configFile: an extra ALSA configuration file defining PCMs (loaded with `snd_config_load`,
    ///     opened with `snd_pcm_open_lconf`).
    /// - Throws: `ALSAError` naming the device: no such device, busy, unsupported format/rate/channels.
    public init(device: String = "default", format: PCMFormat = .speech, latency: Double = 0.1, configFile: String? = nil) throws(ALSAError) {
        pcm = try ALSAPCM(device: device, stream: SND_PCM_STREAM_CAPTURE, format: format, latency: latency, configFile: configFile)
        self.format = format
        self.device = device
    }

    /// Overruns (audio lost because it was not read in time) recovered from so far.
    public var overrunCount: Int { pcm.xrunCount }
    /// Each overrun recovered from so far, with the seconds of audio it lost. Safe to read from another
    /// thread while one thread reads the device.
    public var overruns: [ALSAXrun] { pcm.xruns }
    /// The device's ring buffer and period in frames, as alsa-lib chose them for the requested latency.
    public var bufferFrames: Int { pcm.bufferFrames }
    public var periodFrames: Int { pcm.periodFrames }

    /// Blocks until some audio is available and returns up to `maxFrames` frames (an empty buffer when
    /// `maxFrames <= 0`). A live device never ends, so this never returns nil; a vanished device throws.
    /// The corresponding C function is `snd_pcm_readi`.
    public func read(maxFrames: Int) throws -> PCMBuffer? {
        guard maxFrames > 0 else { return PCMBuffer(format: format) }
        let channels = format.channels
        var samples = [Int16](repeating: 0, count: maxFrames * channels)
        while true {
            // alsa-lib starts a prepared capture stream only when one read asks for at least its start
            // threshold (a whole buffer with snd_pcm_set_params): reads shorter than the buffer would wait
            // forever and fail with EIO (seen on snd-aloop in the VM lane). So start it explicitly, also after
            // an overrun's recovery left it prepared.
            if snd_pcm_state(pcm.handle) == SND_PCM_STATE_PREPARED {
                ALSAError.beginCall()
                try ALSAError.check(snd_pcm_start(pcm.handle), "snd_pcm_start", device: device, message: "could not start capturing")
            }
            ALSAError.beginCall()
            let got = samples.withUnsafeMutableBytes { snd_pcm_readi(pcm.handle, $0.baseAddress, snd_pcm_uframes_t(maxFrames)) }
            if got > 0 {
                samples.removeLast((maxFrames - got) * channels)
                return PCMBuffer(format: format, samples: samples)
            }
            if got < 0 { try pcm.recover(from: Int32(got), in: "snd_pcm_readi") }
        }
    }
}
