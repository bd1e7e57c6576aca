import CSpeexDSP

/// Noise reduction for 16 kHz mono speech with libspeexdsp's preprocessor (a spectral denoiser with a
/// noise estimate that adapts as it runs), optionally with its automatic gain control.
///
/// Streaming: feed consecutive buffers of any size; the suppressor works on whole frames and returns the
/// processed audio it has, keeping the rest of a frame for the next call. `flush()` returns that rest at
/// the end of the stream, so every sample fed in comes out exactly once, in order.
///
/// Spectral subtraction can hurt recognition (docs/measurements.md: sox `noisered` destroyed accuracy, and
/// this suppressor lost some too, docs/speech.md): measure on the speech benchmark before turning it on in
/// front of the recogniser.
/// The corresponding C functions are `speex_preprocess_state_init`, `speex_preprocess_ctl`,
/// `speex_preprocess_run` and `speex_preprocess_state_destroy`.
public final class NoiseSuppressor {
    /// Settings of the preprocessor.
    public struct Configuration: Sendable, Equatable {
        public var sampleRate = 16_000
        /// Samples per frame the preprocessor works on: 320 = 20 ms at 16 kHz (it suits 10–20 ms frames).
        public var frameLength = 320
        /// Maximum attenuation of noise in dB, as a positive number (libspeexdsp's default is 15).
        public var suppression = 25
        /// Automatic gain control: levels the voice, but also raises noise between words. Off by default.
        public var automaticGain = false
        /// The level AGC aims for, in sample units (libspeexdsp's default: 8000).
        public var automaticGainLevel: Float = 8_000

        public init() {}
    }

    public let configuration: Configuration
    /// The format `process` takes and returns.
    public let format: PCMFormat
    private let state: OpaquePointer
    /// Samples waiting for a whole frame.
    private var pending: [Int16] = []

    /// - Throws: `SpeexError` when the preprocessor cannot be created or refuses a setting.
    public init(configuration: Configuration = Configuration()) throws(SpeexError) {
        guard configuration.sampleRate > 0, configuration.frameLength > 0, configuration.suppression >= 0 else {
            throw SpeexError(function: "speex_preprocess_state_init", code: -1,
                             message: "invalid settings: \(configuration.sampleRate) Hz, frames of \(configuration.frameLength), suppression \(configuration.suppression) dB")
        }
        guard let state = speex_preprocess_state_init(Int32(configuration.frameLength), Int32(configuration.sampleRate)) else {
            throw SpeexError(function: "speex_preprocess_state_init", code: -1, message: "could not create the preprocessor")
        }
        do {
            try Self.set(state, SPEEX_PREPROCESS_SET_DENOISE, Int32(1))
            // The library takes the attenuation as a negative dB value.
            try Self.set(state, SPEEX_PREPROCESS_SET_NOISE_SUPPRESS, Int32(-configuration.suppression))
            try Self.set(state, SPEEX_PREPROCESS_SET_AGC, Int32(configuration.automaticGain ? 1 : 0))
            if configuration.automaticGain { try Self.set(state, SPEEX_PREPROCESS_SET_AGC_LEVEL, configuration.automaticGainLevel) }
            try Self.set(state, SPEEX_PREPROCESS_SET_VAD, Int32(0))
            try Self.set(state, SPEEX_PREPROCESS_SET_DEREVERB, Int32(0))
        } catch {
            speex_preprocess_state_destroy(state)
            throw error
        }
        self.state = state
        self.configuration = configuration
        format = PCMFormat(sampleRate: configuration.sampleRate, channels: 1)
    }

    deinit { speex_preprocess_state_destroy(state) }

    /// Denoises the next part of the stream. Returns the whole frames available (up to one frame of the
    /// input may be held back until the next call or `flush()`).
    /// - Throws: `PCMFormatError` when the buffer is not mono at the configured rate.
    public func process(_ buffer: PCMBuffer) throws(PCMFormatError) -> PCMBuffer {
        guard buffer.format == format else { throw PCMFormatError(expected: format, actual: buffer.format, context: "noise suppressor") }
        pending += buffer.samples
        let frame = configuration.frameLength
        let whole = pending.count / frame * frame
        var out = Array(pending[0..<whole])
        pending.removeFirst(whole)
        out.withUnsafeMutableBufferPointer { samples in
            guard let base = samples.baseAddress else { return }
            for offset in stride(from: 0, to: whole, by: frame) {
                _ = speex_preprocess_run(state, base + offset)
            }
        }
        return PCMBuffer(format: format, samples: out)
    }

    /// Ends the stream: the held-back samples, denoised (padded with silence to a frame, then cut back).
    public func flush() -> PCMBuffer {
        let count = pending.count
        guard count > 0 else { return PCMBuffer(format: format) }
        var frame = pending + [Int16](repeating: 0, count: configuration.frameLength - count)
        pending.removeAll()
        frame.withUnsafeMutableBufferPointer { samples in
            if let base = samples.baseAddress { _ = speex_preprocess_run(state, base) }
        }
        return PCMBuffer(format: format, samples: Array(frame.prefix(count)))
    }

    /// One setting. The corresponding C function is `speex_preprocess_ctl`.
    private static func set<Value: BitwiseCopyable>(_ state: OpaquePointer, _ request: Int32, _ value: Value) throws(SpeexError) {
        var value = value
        let code = withUnsafeMutableBytes(of: &value) { speex_preprocess_ctl(state, request, $0.baseAddress) }
        guard code == 0 else { throw SpeexError(function: "speex_preprocess_ctl", code: code, message: "request \(request) refused") }
    }
}
