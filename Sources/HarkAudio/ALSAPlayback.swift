import CALSA

/// Plays interleaved s16le audio on an ALSA PCM device at the requested rate and channel count.
///
/// Devices are named as for `ALSACapture` (`default`, `hw:0,0`, `plughw:…`, or a PCM in `configFile`).
/// Underruns are recovered from and counted. Releasing the object closes the device and drops audio
/// not yet played: call `drain()` first to hear the end.
/// The corresponding C functions are `snd_pcm_open`, `snd_pcm_set_params`, `snd_pcm_writei`,
/// `snd_pcm_drain` and `snd_pcm_close`.
public final class ALSAPlayback: AudioSink {
    public let format: PCMFormat
    public let device: String
    private let pcm: ALSAPCM

    /// Opens `device` for playback; the parameters are as for `ALSACapture.init`.
    public init(device: String = "default", format: PCMFormat = .speech, latency: Double = 0.1, configFile: String? = nil) throws(ALSAError) {
        pcm = try ALSAPCM(device: device, stream: SND_PCM_STREAM_PLAYBACK, format: format, latency: latency, configFile: configFile)
        self.format = format
        self.device = device
    }

    /// Underruns (the device ran out of audio) recovered from so far.
    public var underrunCount: Int { pcm.xrunCount }
    /// Each underrun recovered from so far, with the seconds of silence it left (from running dry to the
    /// next write). A stream that is written to, left alone and written to again runs dry in between: only
    /// `drain()` ends a stretch of audio without one. Safe to read from another thread.
    public var underruns: [ALSAXrun] { pcm.xruns }
    /// The device's ring buffer and period in frames, as alsa-lib chose them for the requested latency.
    public var bufferFrames: Int { pcm.bufferFrames }
    public var periodFrames: Int { pcm.periodFrames }

    /// Queues `buffer` for playing, blocking while the device's buffer is full.
    /// The corresponding C function is `snd_pcm_writei`.
    public func write(_ buffer: PCMBuffer) throws {
        guard buffer.format == format else { throw PCMFormatError(expected: format, actual: buffer.format, context: "ALSA device '\(device)'") }
        let channels = format.channels
        var offset = 0
        let total = buffer.frameCount
        while offset < total {
            ALSAError.beginCall()
            let written = buffer.samples.withUnsafeBytes { bytes in
                snd_pcm_writei(pcm.handle, bytes.baseAddress.map { $0 + offset * channels * 2 }, snd_pcm_uframes_t(total - offset))
            }
            if written < 0 {
                try pcm.recover(from: Int32(written), in: "snd_pcm_writei")
            } else {
                offset += written
            }
        }
    }

    /// Blocks until everything written has been played, then readies the device for more.
    /// The corresponding C functions are `snd_pcm_drain` and `snd_pcm_prepare`.
    public func drain() throws {
        ALSAError.beginCall()
        let drained = snd_pcm_drain(pcm.handle)
        if drained < 0 && drained != -EPIPE { try ALSAError.check(drained, "snd_pcm_drain", device: device) }
        try ALSAError.check(snd_pcm_prepare(pcm.handle), "snd_pcm_prepare", device: device)
    }
}
