import CSpeexDSP

/// Acoustic echo cancellation for 16 kHz mono with libspeexdsp: takes out of the microphone the sound the
/// appliance itself played (a room's far end, a reply), so the far end of an intercom does not hear itself.
///
/// How it works: an adaptive filter (speexdsp's multidelay block frequency-domain filter, MDF) learns the
/// echo path from the loudspeaker signal to the microphone — the delay of the audio buffers and the air, the
/// room's reflections, the speaker's and microphone's response — and subtracts its estimate of the echo from
/// each microphone frame. The filter is `tailMilliseconds` long: echoes that arrive later than that (a big
/// hard room, a delay the buffers add beyond it) are not cancelled. It adapts only while the far end plays,
/// and double talk (both ends at once) is detected so the filter does not learn the local voice as echo.
/// With `residualSuppression` the output also goes through speexdsp's preprocessor linked to the canceller,
/// which attenuates what the linear filter left (the speaker's distortion is not linear, so some always is).
///
/// Feed the two streams in step: `process(microphone:played:)` takes a microphone block and the block that
/// was played while it was captured (aligned by the caller's buffer timing, give or take the filter's tail).
/// Works on whole frames; a remainder is held back until the next call, as `NoiseSuppressor` does.
/// The corresponding C functions are `speex_echo_state_init`, `speex_echo_ctl`, `speex_echo_cancellation`,
/// `speex_echo_state_destroy`, and for residual suppression `speex_preprocess_*` with
/// `SPEEX_PREPROCESS_SET_ECHO_STATE`.
public final class EchoCanceller {
    public struct Configuration: Sendable, Equatable {
        public var sampleRate = 16_000
        /// Samples per frame: 160 = 10 ms at 16 kHz (speexdsp recommends 10–20 ms).
        public var frameLength = 160
        /// How long an echo the filter can model, in milliseconds (speexdsp suggests a third of the room's
        /// reverberation time; 200 ms covers a living room and some buffer misalignment).
        public var tailMilliseconds = 200
        /// Attenuate what the linear filter leaves, with the preprocessor (no noise suppression or gain control).
        public var residualSuppression = true

        public init() {}
    }

    public let configuration: Configuration
    public let format: PCMFormat
    private let echo: OpaquePointer
    private let preprocess: OpaquePointer?
    private var pendingMicrophone: [Int16] = []
    private var pendingPlayed: [Int16] = []

    /// - Throws: `SpeexError` for settings speexdsp cannot use or a state it cannot create.
    public init(configuration: Configuration = Configuration()) throws(SpeexError) {
        let tail = configuration.sampleRate * configuration.tailMilliseconds / 1000
        guard configuration.sampleRate > 0, configuration.frameLength > 0, tail >= configuration.frameLength else {
            throw SpeexError(function: "speex_echo_state_init", code: -1,
                             message: "invalid settings: \(configuration.sampleRate) Hz, frames of \(configuration.frameLength), a tail of \(configuration.tailMilliseconds) ms (it must hold at least one frame)")
        }
        guard let echo = speex_echo_state_init(Int32(configuration.frameLength), Int32(tail)) else {
            throw SpeexError(function: "speex_echo_state_init", code: -1, message: "could not create the echo canceller")
        }
        var rate = Int32(configuration.sampleRate)
        guard speex_echo_ctl(echo, SPEEX_ECHO_SET_SAMPLING_RATE, &rate) == 0 else {
            speex_echo_state_destroy(echo)
            throw SpeexError(function: "speex_echo_ctl", code: -1, message: "sampling rate \(rate) refused")
        }
        var preprocess: OpaquePointer?
        if configuration.residualSuppression {
            guard let state = speex_preprocess_state_init(Int32(configuration.frameLength), Int32(configuration.sampleRate)) else {
                speex_echo_state_destroy(echo)
                throw SpeexError(function: "speex_preprocess_state_init", code: -1, message: "could not create the residual echo suppressor")
            }
            // The preprocessor applies its gains only with its denoiser on; it is set to take at most 3 dB of
            // noise, so what it does is the echo suppression (its defaults: down to -40 dB of residual echo,
            // -15 dB while the near end talks).
            var on: Int32 = 1
            var off: Int32 = 0
            var mildNoise: Int32 = -3
            _ = speex_preprocess_ctl(state, SPEEX_PREPROCESS_SET_DENOISE, &on)
            _ = speex_preprocess_ctl(state, SPEEX_PREPROCESS_SET_NOISE_SUPPRESS, &mildNoise)
            _ = speex_preprocess_ctl(state, SPEEX_PREPROCESS_SET_AGC, &off)
            _ = speex_preprocess_ctl(state, SPEEX_PREPROCESS_SET_DEREVERB, &off)
            guard speex_preprocess_ctl(state, SPEEX_PREPROCESS_SET_ECHO_STATE, UnsafeMutableRawPointer(echo)) == 0 else {
                speex_preprocess_state_destroy(state)
                speex_echo_state_destroy(echo)
                throw SpeexError(function: "speex_preprocess_ctl", code: -1, message: "the echo state was refused")
            }
            preprocess = state
        }
        self.echo = echo
        self.preprocess = preprocess
        self.configuration = configuration
        format = PCMFormat(sampleRate: configuration.sampleRate, channels: 1)
    }

    deinit {
        if let preprocess { speex_preprocess_state_destroy(preprocess) }
        speex_echo_state_destroy(echo)
    }

    /// The microphone with the echo of `played` taken out, for the whole frames available. `microphone` and
    /// `played` must be the same length (the same span of time) and in `format`.
    /// - Throws: `PCMFormatError` for another format; `EchoCancellerError.unequalLengths` for blocks of different lengths.
    public func process(microphone: PCMBuffer, played: PCMBuffer) throws -> PCMBuffer {
        guard microphone.format == format else { throw PCMFormatError(expected: format, actual: microphone.format, context: "echo canceller, microphone") }
        guard played.format == format else { throw PCMFormatError(expected: format, actual: played.format, context: "echo canceller, played audio") }
        guard microphone.samples.count == played.samples.count else {
            throw EchoCancellerError.unequalLengths(microphone: microphone.samples.count, played: played.samples.count)
        }
        pendingMicrophone += microphone.samples
        pendingPlayed += played.samples
        let frame = configuration.frameLength
        let whole = pendingMicrophone.count / frame * frame
        var out = [Int16](repeating: 0, count: whole)
        pendingMicrophone.withUnsafeBufferPointer { mic in
            pendingPlayed.withUnsafeBufferPointer { play in
                out.withUnsafeMutableBufferPointer { result in
                    guard let m = mic.baseAddress, let p = play.baseAddress, let r = result.baseAddress else { return }
                    for offset in stride(from: 0, to: whole, by: frame) {
                        speex_echo_cancellation(echo, m + offset, p + offset, r + offset)
                        if let preprocess { _ = speex_preprocess_run(preprocess, r + offset) }
                    }
                }
            }
        }
        pendingMicrophone.removeFirst(whole)
        pendingPlayed.removeFirst(whole)
        return PCMBuffer(format: format, samples: out)
    }

    /// Forgets the learnt echo path (the speaker or the room changed).
    public func reset() {
        speex_echo_state_reset(echo)
        pendingMicrophone.removeAll()
        pendingPlayed.removeAll()
    }
}

public enum EchoCancellerError: Error, CustomStringConvertible, Equatable, Sendable {
    case unequalLengths(microphone: Int, played: Int)

    public var description: String {
        switch self {
        case .unequalLengths(let m, let p):
            "echo canceller: the microphone block has \(m) samples and the played block \(p): they must cover the same time"
        }
    }
}
