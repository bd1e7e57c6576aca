import CSpeexDSP
import Foundation
import Synchronization

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
/// was played while it was captured. The echo comes back later than that by the audio buffers' latency and the
/// air; with `alignment` (the default) the canceller measures that delay (`EchoDelayEstimator`, from the first
/// second or so of far-end sound) and delays its far end by it less `alignmentMarginMilliseconds`, so the filter's tail
/// covers the room rather than the buffers. When the delay is first found, or changes, the filter starts again
/// on the last `replaySeconds` of both streams, replayed at once `replayPasses` times, so it is no less converged than it was.
/// An estimate costs far more than cancelling a block (a correlation over 2,000 lags); with
/// `backgroundEstimation` it runs on a thread of its own and its answer is taken up by a later `process`, so a
/// live loop calling `process` never waits for one.
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
        /// Measure the echo's delay and delay the far end by it (less `alignmentMarginMilliseconds`).
        public var alignment = true
        /// The longest delay the alignment looks for.
        public var maximumDelayMilliseconds = 500
        /// How much earlier than the measured onset the filter starts: the estimate can be a few milliseconds
        /// late, and an echo that arrives before the filter's start cannot be cancelled at all.
        public var alignmentMarginMilliseconds = 10
        /// Estimate the delay on a thread of its own instead of inside `process` (a live loop: the appliance in a
        /// room). Off, the result depends on the audio alone (a file, a test); on, an estimate's answer is used by
        /// the first `process` after it is ready, so when it lands depends on the machine.
        public var backgroundEstimation = false

        public init() {}
    }

    public let configuration: Configuration
    public let format: PCMFormat
    private var echo: OpaquePointer
    private var preprocess: OpaquePointer?
    private var pendingMicrophone: [Int16] = []

    // Alignment. Sample indices count from the first sample given (microphone and played share them).
    /// Samples the far end is delayed by (0 until a delay is found).
    public private(set) var delay = 0
    /// Played samples from index `playedStart` on: the far end still to come and the past the estimator and a
    /// replay need.
    private var playedHistory: [Int16] = []
    private var playedStart = 0
    /// The newest microphone samples already processed (a few seconds), ending at index `processed`.
    private var microphoneHistory: [Int16] = []
    private var processed = 0
    private var sinceEstimate = 0
    /// Recent estimates' onsets (samples), oldest first.
    private var onsets: [Int] = []
    private let estimator: EchoDelayEstimator
    /// The estimates made on another thread (`backgroundEstimation`), nil when they are made in `process`.
    private let worker: EstimateWorker?

    /// How often the delay is estimated (seconds of microphone), before it is found and after.
    static let searchInterval = 0.25
    static let checkInterval = 2.0
    /// How long the delay is looked for at `searchInterval` before the canceller falls back to `checkInterval`.
    static let searchSeconds = 10.0
    /// One estimate's window of microphone signal.
    static let estimateSeconds = 1.0
    /// How much of both streams the filter is given again when the delay is found or changes.
    public static let replaySeconds = 2.0
    /// How often the replay goes over that history: once leaves the new filter less converged than the one it
    /// replaces, which had adapted on everything so far (docs/rooms.md, "Echo cancellation").
    static let replayPasses = 2
    /// Estimates that must agree (within `agreementSeconds`) before the delay is set: the first time, and when it changes.
    static let estimatesToAlign = 2
    static let estimatesToRealign = 3
    static let agreementSeconds = 0.010
    /// An echo coming back this much later than the filter's start allows is worth a restart.
    static let realignLaterSeconds = 0.040

    /// When the delay was last set: the microphone samples processed by then (nil: not set yet).
    public private(set) var alignedAtSample: Int?
    private var aligned: Bool { alignedAtSample != nil }

    /// The delay the far end is given, in milliseconds; nil until one is found.
    public var alignedDelayMilliseconds: Int? {
        aligned ? delay * 1000 / configuration.sampleRate : nil
    }

    /// - Throws: `SpeexError` for settings speexdsp cannot use or a state it cannot create.
    public init(configuration: Configuration = Configuration()) throws(SpeexError) {
        (echo, preprocess) = try Self.makeStates(configuration)
        self.configuration = configuration
        format = PCMFormat(sampleRate: configuration.sampleRate, channels: 1)
        estimator = EchoDelayEstimator(maximumLag: configuration.sampleRate * max(0, configuration.maximumDelayMilliseconds) / 1000,
                                       window: Int(Double(configuration.sampleRate) * Self.estimateSeconds))
        worker = configuration.alignment && configuration.backgroundEstimation ? EstimateWorker() : nil
    }

    /// speexdsp's canceller and, with `residualSuppression`, the preprocessor linked to it.
    private static func makeStates(_ configuration: Configuration) throws(SpeexError) -> (OpaquePointer, OpaquePointer?) {
        let tail = configuration.sampleRate * configuration.tailMilliseconds / 1000
        guard configuration.sampleRate > 0, configuration.frameLength > 0, tail >= configuration.frameLength else {
            throw SpeexError(function: "speex_echo_state_init", code: -1,
                             message: "invalid settings: \(configuration.sampleRate) Hz, frames of \(configuration.frameLength), a tail of \(configuration.tailMilliseconds) ms (it must hold at least one frame)")
        }
        guard configuration.maximumDelayMilliseconds >= 0, configuration.alignmentMarginMilliseconds >= 0 else {
            throw SpeexError(function: "speex_echo_state_init", code: -1,
                             message: "invalid settings: a maximum delay of \(configuration.maximumDelayMilliseconds) ms and a margin of \(configuration.alignmentMarginMilliseconds) ms (neither may be negative)")
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
        return (echo, preprocess)
    }

    deinit {
        Self.destroy(echo, preprocess)
    }

    private static func destroy(_ echo: OpaquePointer, _ preprocess: OpaquePointer?) {
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
        playedHistory += played.samples
        let frame = configuration.frameLength
        let whole = pendingMicrophone.count / frame * frame
        var out = [Int16]()
        out.reserveCapacity(whole)
        // In steps of at most 100 ms, so the delay is looked for during a long block too (`hark echo-cancel`
        // gives a whole recording at once).
        let step = max(frame, configuration.sampleRate / 10 / frame * frame)
        var done = 0
        while done < whole {
            let count = min(step, whole - done)
            let microphoneChunk = pendingMicrophone[done..<(done + count)]
            // An estimate made meanwhile on the worker's thread: used now (the onset is a lag, not a time, so it
            // holds for the blocks since).
            if let worker, let answer = worker.take() {
                if let estimate = answer { consider(estimate) }
            }
            out += run(microphone: microphoneChunk)
            microphoneHistory += microphoneChunk
            processed += count
            done += count
            if configuration.alignment {
                sinceEstimate += count
                // Often while looking for the delay at the start; then (found, or no echo in the first
                // `searchSeconds`: a headset) now and then, to follow a change.
                let searching = !aligned && Double(processed) < Self.searchSeconds * Double(configuration.sampleRate)
                let interval = searching ? Self.searchInterval : Self.checkInterval
                if Double(sinceEstimate) >= interval * Double(configuration.sampleRate) {
                    sinceEstimate = 0
                    considerAlignment()
                }
            }
            trimHistory()
        }
        pendingMicrophone.removeFirst(whole)
        return PCMBuffer(format: format, samples: out)
    }

    /// The far end for the microphone samples from index `start` on: what was played `delay` samples earlier.
    private func farEnd(from start: Int, count: Int) -> [Int16] {
        playedSamples(from: start - delay, count: count)
    }

    /// What was played from index `start` on (silence before the first sample and where the history no longer reaches).
    private func playedSamples(from start: Int, count: Int) -> [Int16] {
        var samples = [Int16](repeating: 0, count: count)
        let low = max(start, playedStart), high = min(start + count, playedStart + playedHistory.count)
        if low < high {
            samples.replaceSubrange((low - start)..<(high - start), with: playedHistory[(low - playedStart)..<(high - playedStart)])
        }
        return samples
    }

    /// Runs the filter (and the suppressor) over whole frames of `microphone`, the samples from index `processed`.
    private func run(microphone: ArraySlice<Int16>) -> [Int16] {
        let frame = configuration.frameLength
        let far = farEnd(from: processed, count: microphone.count)
        var out = [Int16](repeating: 0, count: microphone.count)
        microphone.withUnsafeBufferPointer { mic in
            far.withUnsafeBufferPointer { play in
                out.withUnsafeMutableBufferPointer { result in
                    guard let m = mic.baseAddress, let p = play.baseAddress, let r = result.baseAddress else { return }
                    for offset in stride(from: 0, to: microphone.count - frame + 1, by: frame) {
                        speex_echo_cancellation(echo, m + offset, p + offset, r + offset)
                        if let preprocess { _ = speex_preprocess_run(preprocess, r + offset) }
                    }
                }
            }
        }
        return out
    }

    /// Estimates the delay over the last second (here, or on the worker's thread when there is one and it is not
    /// busy with the last one); `consider` takes the answer.
    private func considerAlignment() {
        let window = estimator.window
        guard microphoneHistory.count >= window else { return }
        // The lags the played history covers (at the start, only as far back as the stream goes).
        let lags = min(estimator.maximumLag, processed - window - max(0, playedStart))
        guard lags * 10 >= configuration.sampleRate else { return }  // at least 100 ms
        let far = playedSamples(from: processed - window - lags, count: window + lags)
        let microphone = Array(microphoneHistory.suffix(window))
        if let worker {
            worker.start(estimator, microphone: microphone, played: far)
            return
        }
        if let estimate = estimator.estimate(microphone: microphone[...], played: far[...]) { consider(estimate) }
    }

    /// Sets the delay when enough estimates agree and it is new.
    private func consider(_ estimate: EchoDelayEstimator.Estimate) {
        onsets.append(estimate.onset)
        let needed = aligned ? Self.estimatesToRealign : Self.estimatesToAlign
        if onsets.count > needed { onsets.removeFirst(onsets.count - needed) }
        guard onsets.count == needed, let low = onsets.min(), let high = onsets.max(),
              Double(high - low) <= Self.agreementSeconds * Double(configuration.sampleRate) else { return }
        let margin = configuration.sampleRate * configuration.alignmentMarginMilliseconds / 1000
        let newDelay = max(0, low - margin)
        // Once aligned, a restart costs the converged filter: only for an echo that now starts before the
        // filter does (the middle estimate, as single onsets can come out early), or one that comes back so much
        // later that the tail misses a good part of the room.
        let middle = onsets.sorted()[onsets.count / 2]
        onsets.removeAll()
        if aligned && middle >= delay && Double(newDelay - delay) < Self.realignLaterSeconds * Double(configuration.sampleRate) { return }
        realign(to: newDelay)
    }

    /// A fresh filter with the far end delayed by `newDelay`, given the recent past of both streams at once.
    private func realign(to newDelay: Int) {
        guard let states = try? Self.makeStates(configuration) else { return }  // the same settings worked at init
        Self.destroy(echo, preprocess)
        (echo, preprocess) = states
        delay = newDelay
        alignedAtSample = processed
        let frame = configuration.frameLength
        let replay = min(microphoneHistory.count, Int(Self.replaySeconds * Double(configuration.sampleRate))) / frame * frame
        let now = processed
        for _ in 0..<Self.replayPasses {
            processed = now - replay
            _ = run(microphone: microphoneHistory.suffix(replay))
        }
        processed = now
    }

    /// Keeps what a replay and the next estimate need, and the far end still to come.
    private func trimHistory() {
        let keep = Int(max(Self.replaySeconds, Self.estimateSeconds) * Double(configuration.sampleRate)) + configuration.frameLength
        if microphoneHistory.count > keep + configuration.sampleRate { microphoneHistory.removeFirst(microphoneHistory.count - keep) }
        let playedKeepFrom = processed - keep - max(estimator.maximumLag, delay)
        let drop = playedKeepFrom - playedStart
        if drop > configuration.sampleRate {
            let removed = min(drop, playedHistory.count)
            playedHistory.removeFirst(removed)
            playedStart += removed
        }
    }

    /// Waits for the estimate running on the worker's thread, if any (tests: its answer is then taken up by the
    /// next `process`).
    public func waitForEstimate() {
        worker?.wait()
    }

    /// Forgets the learnt echo path (the speaker or the room changed).
    public func reset() {
        worker?.forget()
        speex_echo_state_reset(echo)
        pendingMicrophone.removeAll()
        playedHistory.removeAll()
        microphoneHistory.removeAll()
        playedStart = 0
        processed = 0
        sinceEstimate = 0
        onsets.removeAll()
        delay = 0
        alignedAtSample = nil
    }
}

/// `EchoCanceller`'s estimates on a thread of their own: at most one at a time; its answer waits until the
/// canceller takes it.
final class EstimateWorker: Sendable {
    private enum Slot {
        case idle
        case running(generation: Int)
        case done(generation: Int, EchoDelayEstimator.Estimate?)
    }

    private struct State {
        var slot = Slot.idle
        /// Raised by `forget`: an answer for audio from before a reset is dropped.
        var generation = 0
    }

    private let state = Mutex(State())
    private let queue = DispatchQueue(label: "hark.echo-delay", qos: .utility)

    /// Starts an estimate unless one is running or its answer has not been taken yet.
    func start(_ estimator: EchoDelayEstimator, microphone: [Int16], played: [Int16]) {
        let generation: Int? = state.withLock { s in
            guard case .idle = s.slot else { return nil }
            s.slot = .running(generation: s.generation)
            return s.generation
        }
        guard let generation else { return }
        queue.async { [self] in
            let estimate = estimator.estimate(microphone: microphone[...], played: played[...])
            self.state.withLock { s in
                if case .running(let g) = s.slot, g == generation { s.slot = .done(generation: g, estimate) }
            }
        }
    }

    /// The finished estimate's answer (itself nil when no echo stood out), or nil while none is finished.
    func take() -> EchoDelayEstimator.Estimate?? {
        state.withLock { s -> EchoDelayEstimator.Estimate?? in
            guard case .done(let generation, let estimate) = s.slot else { return nil }
            s.slot = .idle
            return generation == s.generation ? .some(estimate) : nil
        }
    }

    func wait() {
        queue.sync {}
    }

    /// Drops the estimate running or waiting.
    func forget() {
        state.withLock { s in
            s.generation += 1
            s.slot = .idle
        }
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
