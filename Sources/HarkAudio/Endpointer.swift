import Foundation

/// Streaming end-of-speech detection: feed it audio as it arrives and it says when an utterance has
/// started and when it has ended, keeping the utterance's audio (with a little audio from before the start)
/// for the recogniser.
///
/// It compares each frame's energy with an adaptive noise floor rather than a fixed level, so it works in a
/// quiet room and next to a running fan, on a loud microphone and on a quiet one:
/// - levels are averaged over 50 ms (single 10 ms frames of a room's background swing ±5 dB, enough to
///   pass for speech against any floor below their mean);
/// - the floor is the quietest level of the last `noiseFloorWindow` seconds (minimum statistics): the
///   short dips between words keep it on the background during speech, and when the background gets
///   louder the floor follows once the window has passed (an exponential tracker tried first climbed
///   6 dB during a 2 s sentence and cut its soft ending);
/// - speech starts when frames stay `startThreshold` dB above the floor for `minimumSpeech`, and carries on
///   while they stay `continueThreshold` dB above it (hysteresis: trailing consonants and soft words do not
///   count as silence);
/// - frames below `minimumLevel` dBFS never count as speech, so dither or a hum over digital silence does
///   not start an utterance;
/// - once the utterance has had `voicedToArm` of voiced audio (a voice's pitch, `VoicingDetector`), a loud frame
///   keeps it going only within `voicedHold` of a voiced one: a kitchen's clatter after the words rises 4–14 dB
///   above the floor again and again, and judged by level alone the utterance would not end until the room
///   fell quiet (docs/speech.md, "Voiced speech keeps an utterance going"). Whispered speech, which has no
///   pitch, never arms it and ends on level alone;
/// - an utterance with less than `minimumVoiced` of voiced audio in all is dismissed when it ends, and the
///   endpointer goes on waiting: a knock, a dropped spoon or a door rises 12 dB above the floor for a tenth of a
///   second and starts an utterance, in which the recogniser would hear the nearest short command ("hi",
///   "latte"); a voice's vowels have a pitch, a knock has none (docs/speech.md, "An utterance needs a voice").
///   `dismissedUtterances` counts them. Off with the voicing rule (`voicedHold` 0) or with `minimumVoiced` 0, as a
///   whisper needs. A pitch that holds is not a voice either: an utterance whose voiced frames keep their pitch period
///   from one frame to the next (`steadyPitchShare`) is a chime, a ring tone or an alarm, and is dismissed the same way.
///
/// It ends on silence only, after `trailingSilence` (0.8 s by default): speakers pause mid-sentence, and
/// cutting at a 0.3–0.5 s pause hands the recogniser half a command (docs/measurements.md,
/// "Whole utterances": 0.600 vs 0.961).
public final class Endpointer {
    /// Tuning, all in seconds or decibels. The defaults suit 16 kHz speech commands.
    public struct Configuration: Sendable, Equatable {
        /// The audio's sample rate.
        public var sampleRate = 16_000
        /// The analysis frame: 0.01 or 0.02 s.
        public var frameDuration = 0.01
        /// Non-speech after the last speech that ends the utterance. Longer than a normal mid-sentence pause.
        public var trailingSilence = 0.8
        /// The longest utterance (from its padded start); it ends there even if speech goes on.
        public var maximumLength = 10.0
        /// How long frames must stay above the start threshold before speech counts as started (rejects clicks).
        public var minimumSpeech = 0.1
        /// Audio kept from before the detected start, so soft onsets ("f", "s", "h") reach the recogniser.
        public var leadingPadding = 0.3
        /// dB above the noise floor at which speech starts.
        public var startThreshold = 12.0
        /// dB above the noise floor that keeps speech going once started. 8 dB (rather than 6) halved how
        /// long the end took to come in kitchen noise and cut runaway utterances in room noise (104 clips).
        public var continueThreshold = 8.0
        /// Frames quieter than this (dBFS) are never speech: dither or hum over digital silence stays silence.
        public var minimumLevel = -70.0
        /// How far back the noise floor looks for its quietest frame. Longer than the gaps between words.
        public var noiseFloorWindow = 2.0
        /// After a voiced frame, how long loud frames without a voice's pitch still count as speech (the
        /// consonants around a vowel); 0 turns the voicing rule off, so that the level alone decides.
        public var voicedHold = 0.2
        /// How much voiced audio (frames above `voicingThreshold`) the utterance needs before the voicing rule
        /// applies: a knock that started it, or a whisper, is judged by level alone.
        public var voicedToArm = 0.05
        /// The correlation at a pitch period (`VoicingDetector.strength()`) from which a loud frame is voiced.
        /// Chosen on generated noise and other speech, never the benchmark's kitchen: vowels in 6 dB of
        /// noise mostly read 0.7–1, a clatter's knocks and rings mostly below 0.6.
        public var voicingThreshold = 0.65
        /// The voiced audio (frames above `voicingThreshold`, anywhere in the utterance) an utterance needs to be
        /// handed on; one with less is dismissed as noise when it ends. 0 keeps every utterance, tones included (a
        /// whisper has no pitch). Chosen on generated noise and other speech, never the benchmark's kitchen (docs/speech.md,
        /// "An utterance needs a voice").
        public var minimumVoiced = 0.1
        /// A voice's pitch drifts; an electronic tone's holds. Of the utterance's consecutive voiced frames, the share
        /// whose pitch period changes by less than 0.3 % (`steadyPitchStep`) from the one before: at this share or
        /// above, over at least `steadyPitchPairs` pairs, the utterance is a tone (a chime, a ring tone, an alarm) and
        /// is dismissed like one without a voice. nil: no such rule (nor with `minimumVoiced` 0, which keeps every
        /// utterance). Chosen on Debian's desktop sounds (oxygen-sounds, sound-icons, gnome-audio) and speech in
        /// generated noise: speech reads at most 0.45, most chimes 0.5–1 (docs/speech.md, "An utterance needs a voice").
        public var steadyPitchShare: Double? = 0.5

        public init() {}

        /// The samples in one analysis frame.
        public var frameLength: Int { Int((Double(sampleRate) * frameDuration).rounded()) }

        /// Why this configuration cannot work, or nil.
        public var problem: String? {
            if sampleRate <= 0 { return "sampleRate must be positive (got \(sampleRate))" }
            if frameLength < 1 || frameDuration > 0.1 { return "frameDuration must be between one sample and 0.1 s (got \(frameDuration))" }
            if !(trailingSilence > 0) { return "trailingSilence must be positive (got \(trailingSilence))" }
            if !(maximumLength > 0) { return "maximumLength must be positive (got \(maximumLength))" }
            if !(minimumSpeech >= 0) || !(leadingPadding >= 0) { return "minimumSpeech and leadingPadding must not be negative" }
            if !(continueThreshold >= 0) || !(startThreshold >= continueThreshold) {
                return "thresholds must satisfy 0 ≤ continueThreshold ≤ startThreshold (got \(continueThreshold), \(startThreshold))"
            }
            if !(noiseFloorWindow >= frameDuration) || noiseFloorWindow > 60 {
                return "noiseFloorWindow must be between one frame and 60 s (got \(noiseFloorWindow))"
            }
            if !(voicedHold >= 0) || !(voicedToArm >= 0) || !(minimumVoiced >= 0) {
                return "voicedHold, voicedToArm and minimumVoiced must not be negative"
            }
            if let share = steadyPitchShare, !(share > 0 && share <= 1) { return "steadyPitchShare must be in (0, 1] or nil (got \(share))" }
            if !(voicingThreshold > 0 && voicingThreshold <= 1) {
                return "voicingThreshold must be in (0, 1] (got \(voicingThreshold))"
            }
            return nil
        }
    }

    /// A configuration that cannot work, saying which setting is wrong.
    public struct ConfigurationError: Error, CustomStringConvertible, Sendable {
        public var message: String
        public var description: String { "invalid endpointer configuration: \(message)" }
    }

    public let configuration: Configuration
    /// The format `process` takes (mono at the configured rate; several channels are averaged).
    public let format: PCMFormat

    /// The state after the audio processed so far.
    public private(set) var decision = EndpointerDecision.waitingForSpeech
    /// The utterance's first sample (leading padding included), counted from the start or the last `reset()`.
    public private(set) var speechStartSample: Int?
    /// The sample just after the last frame that counted as speech.
    public private(set) var speechEndSample: Int?
    /// Samples analysed since the start or the last `reset()` (whole frames; the rest waits for more audio).
    public private(set) var processedSamples = 0
    /// The utterance's audio from `speechStartSample` to the frame that ended it; empty while waiting.
    public private(set) var utterance: PCMBuffer
    /// The current noise floor estimate in dBFS (nil before the first frame).
    public private(set) var noiseFloor: Double?
    /// Utterances dismissed for want of a voice (too little voiced audio, `Configuration.minimumVoiced`, or a pitch that
    /// held, `Configuration.steadyPitchShare`) since the endpointer was made.
    public private(set) var dismissedUtterances = 0
    /// Whether the utterance so far has the voiced audio it needs to be handed on, and a pitch that moves as a
    /// voice's does (always, with the voicing rule off).
    public var hasVoice: Bool {
        // No voicing rule, or a minimum of 0: every utterance is kept.
        guard voicing != nil, minimumVoicedFrames > 0 else { return true }
        guard voicedFrames >= minimumVoicedFrames else { return false }
        guard let share = configuration.steadyPitchShare, voicedPairs >= Self.steadyPitchPairs else { return true }
        return Double(steadyPairs) < share * Double(voicedPairs)
    }
    /// Consecutive voiced frames whose pitch periods differ by less than this (relative) hold their pitch.
    public static let steadyPitchStep = 0.003
    /// The pairs of consecutive voiced frames an utterance needs before its pitch's steadiness is judged.
    public static let steadyPitchPairs = 10

    private let frameLength: Int
    /// Samples not yet making a whole frame.
    private var pending: [Int16] = []
    /// Recent audio while waiting, starting at `historyStart`, long enough to supply the leading padding.
    private var history: [Int16] = []
    private var historyStart = 0
    /// The first sample of the frames that may be a start of speech, and how many frames back it up.
    private var candidateStart: Int?
    private var candidateFrames = 0
    private var silentFrames = 0
    /// The smoothed levels (dBFS) inside the noise floor window, a ring whose next slot is `recentNext`.
    private var recentLevels: [Double] = []
    private var recentNext = 0
    private let windowFrames: Int
    /// The powers of the last few frames, averaged into the level the floor tracks.
    private var smoothingPowers: [Double] = []
    private let smoothingFrames: Int
    /// The voicing rule (nil when `voicedHold` is 0): the detector, the frames it spans, and the state of the
    /// current utterance (or candidate start): voiced frames so far and the index of the last one.
    private var voicing: VoicingDetector?
    private let holdFrames: Int
    private let armFrames: Int
    private let minimumVoicedFrames: Int
    private var voicedFrames = 0
    private var lastVoicedFrame = Int.min / 2
    /// The pitch period of the last voiced frame, and the utterance's pairs of consecutive voiced frames: all, and
    /// those whose period held (`steadyPitchStep`).
    private var lastPeriod = 0.0
    private var voicedPairs = 0
    private var steadyPairs = 0

    /// - Throws: `ConfigurationError` naming the setting that cannot work.
    public init(configuration: Configuration = Configuration()) throws(ConfigurationError) {
        if let problem = configuration.problem { throw ConfigurationError(message: problem) }
        self.configuration = configuration
        format = PCMFormat(sampleRate: configuration.sampleRate, channels: 1)
        frameLength = configuration.frameLength
        utterance = PCMBuffer(format: format)
        smoothingFrames = max(1, Int((0.05 * Double(configuration.sampleRate) / Double(frameLength)).rounded()))
        windowFrames = max(1, Int((configuration.noiseFloorWindow * Double(configuration.sampleRate) / Double(frameLength)).rounded()))
        let framesPerSecond = Double(configuration.sampleRate) / Double(frameLength)
        holdFrames = Int((configuration.voicedHold * framesPerSecond).rounded())
        armFrames = max(1, Int((configuration.voicedToArm * framesPerSecond).rounded()))
        minimumVoicedFrames = Int((configuration.minimumVoiced * framesPerSecond).rounded())
        voicing = holdFrames > 0 ? VoicingDetector(sampleRate: configuration.sampleRate) : nil
    }

    /// Analyses `buffer` (the next audio of the stream) and returns the decision after it. Once ended,
    /// further audio is ignored until `reset()`.
    /// - Throws: `PCMFormatError` when the buffer's rate is not the configured one.
    @discardableResult
    public func process(_ buffer: PCMBuffer) throws(PCMFormatError) -> EndpointerDecision {
        guard buffer.format.sampleRate == format.sampleRate else {
            throw PCMFormatError(expected: format, actual: buffer.format, context: "endpointer")
        }
        if decision.hasEnded { return decision }
        pending += buffer.downmixed().samples
        var offset = 0
        while pending.count - offset >= frameLength && !decision.hasEnded {
            analyse(pending[offset..<(offset + frameLength)])
            offset += frameLength
        }
        pending.removeFirst(offset)
        if decision.hasEnded { pending.removeAll() }
        return decision
    }

    /// Forgets the utterance and starts waiting for the next one. The noise floor is kept by default: the
    /// room has not changed, and a fresh estimate would need a moment of audio to settle.
    public func reset(keepingNoiseFloor: Bool = true) {
        waitForSpeech()
        processedSamples = 0
        pending.removeAll()
        history.removeAll()
        historyStart = 0
        lastVoicedFrame = Int.min / 2
        if !keepingNoiseFloor {
            noiseFloor = nil
            recentLevels.removeAll()
            recentNext = 0
            smoothingPowers.removeAll()
        }
    }

    /// Whether a whole recording (`audio`, at the configured rate) held only sound this endpointer dismisses (no voice,
    /// or a pitch that holds) and nothing it would hand on. Paths that decode a whole recording without endpointing it,
    /// such as the Wyoming server's transcriptions, answer such a recording (a chime, a knock) with no transcript
    /// instead of the nearest command. A recording in which it finds no utterance at all (quiet, or too short for its
    /// noise floor) is not judged: false.
    /// - Throws: `ConfigurationError` for a configuration that cannot work, `PCMFormatError` for another rate.
    public static func heardOnlyNoise(_ audio: PCMBuffer, configuration: Configuration = Configuration()) throws -> Bool {
        let endpointer = try Endpointer(configuration: configuration)
        try endpointer.process(audio)
        return endpointer.heardOnlyNoiseAtEndOfInput()
    }

    /// The input has ended (`endOfInput`): whether all it held was sound this endpointer dismissed, with no utterance it
    /// would hand on, as `heardOnlyNoise(_:configuration:)` judges a whole recording; for a stream fed bit by bit, such
    /// as a push-to-talk press. No utterance found at all is not judged: false.
    public func heardOnlyNoiseAtEndOfInput() -> Bool {
        // An utterance that ended was handed on: it had a voice. One cut off by the end counts as `endOfInput` says.
        if decision.hasEnded { return false }
        return !endOfInput() && dismissedUtterances > 0
    }

    /// The input has ended (a file, a closed stream): an utterance still in progress without a voice is dismissed as
    /// one ending on silence would be. Returns whether an utterance with its voice is still in progress, to be decoded.
    @discardableResult
    public func endOfInput() -> Bool {
        guard decision == .inSpeech else { return false }
        guard hasVoice else {
            dismiss()
            return false
        }
        return true
    }

    /// Follows the room's noise floor from audio that is not being endpointed (while the appliance waits
    /// for a wake phrase or a button), so the first utterance after a trigger is judged against the room,
    /// not against its own first frames. No decision changes.
    /// - Throws: `PCMFormatError` when the buffer's rate is not the configured one.
    public func observeBackground(_ buffer: PCMBuffer) throws(PCMFormatError) {
        guard buffer.format.sampleRate == format.sampleRate else {
            throw PCMFormatError(expected: format, actual: buffer.format, context: "endpointer")
        }
        let samples = buffer.downmixed().samples
        var offset = 0
        while samples.count - offset >= frameLength {
            _ = track(samples[offset..<(offset + frameLength)])
            offset += frameLength
        }
    }

    /// A frame's level in dBFS (digital silence is clamped to -100 dB).
    static func level(_ frame: ArraySlice<Int16>) -> Double {
        var sum = 0.0
        for sample in frame { sum += Double(sample) * Double(sample) }
        let rms = (sum / Double(max(1, frame.count))).squareRoot()
        return max(-100, 20 * log10(max(rms, 1e-9) / 32_768))
    }

    /// Smooths the frame's level and updates the noise floor; returns the level and the floor it was judged against.
    private func track(_ frame: ArraySlice<Int16>) -> (level: Double, floor: Double) {
        // Decisions and the floor both use the level averaged over the last 50 ms: single 10 ms frames of
        // a room's background swing ±5 dB, enough to pass for speech against any floor below their mean.
        voicing?.push(frame)
        smoothingPowers.append(pow(10, Self.level(frame) / 10))
        if smoothingPowers.count > smoothingFrames { smoothingPowers.removeFirst() }
        let level = max(-100, 10 * log10(smoothingPowers.reduce(0, +) / Double(smoothingPowers.count)))
        let floor = noiseFloor ?? level
        // Update the floor after classifying, so a frame is judged against the audio before it.
        if recentLevels.count < windowFrames {
            recentLevels.append(level)
        } else {
            recentLevels[recentNext] = level
            recentNext = (recentNext + 1) % windowFrames
        }
        noiseFloor = recentLevels.min()
        return (level, floor)
    }

    private func analyse(_ frame: ArraySlice<Int16>) {
        let start = processedSamples
        processedSamples += frame.count
        let (level, floor) = track(frame)
        let loud = level >= configuration.minimumLevel
        let starts = loud && level >= floor + configuration.startThreshold
        let continues = loud && level >= floor + configuration.continueThreshold
        let frameIndex = start / frameLength
        // Only loud frames are asked (the rest cannot count as speech anyway), which keeps the cost down.
        let measured = continues ? voicing?.measure() : nil
        let voiced = (measured?.strength ?? -1) >= configuration.voicingThreshold
        if voiced, let period = measured?.period {
            // A pair with the frame before, when that one was voiced too: did the pitch hold?
            if lastVoicedFrame == frameIndex - 1, lastPeriod > 0, period > 0 {
                voicedPairs += 1
                if abs(log(period / lastPeriod)) < Self.steadyPitchStep { steadyPairs += 1 }
            }
            lastPeriod = period
        }
        if voiced { lastVoicedFrame = frameIndex }

        switch decision {
        case .waitingForSpeech:
            history += frame
            if starts || (continues && candidateStart != nil) {
                if candidateStart == nil { candidateStart = start }
                candidateFrames += 1
                voicedFrames += voiced ? 1 : 0
            } else {
                candidateStart = nil
                candidateFrames = 0
                voicedFrames = 0
                voicedPairs = 0
                steadyPairs = 0
            }
            if let candidateStart, Double(candidateFrames * frameLength) >= configuration.minimumSpeech * Double(configuration.sampleRate) {
                begin(at: candidateStart)
            } else {
                // Keep only what the padding could still need.
                let keepFrom = (candidateStart ?? processedSamples) - paddingSamples
                let drop = min(history.count, max(0, keepFrom - historyStart))
                history.removeFirst(drop)
                historyStart += drop
            }
        case .inSpeech:
            utterance.samples += frame
            voicedFrames += voiced ? 1 : 0
            let armed = voicing != nil && voicedFrames >= armFrames
            if continues && (!armed || frameIndex - lastVoicedFrame < holdFrames) {
                silentFrames = 0
                speechEndSample = processedSamples
            } else {
                silentFrames += 1
            }
            if Double(silentFrames * frameLength) >= configuration.trailingSilence * Double(configuration.sampleRate) {
                end(.trailingSilence)
            } else if let speechStartSample,
                      Double(processedSamples - speechStartSample) >= configuration.maximumLength * Double(configuration.sampleRate) {
                end(.maximumLength)
            }
        case .ended:
            break
        }
    }

    private var paddingSamples: Int { Int(configuration.leadingPadding * Double(configuration.sampleRate)) }

    private func begin(at candidate: Int) {
        let first = max(historyStart, candidate - paddingSamples)
        speechStartSample = first
        speechEndSample = processedSamples
        utterance = PCMBuffer(format: format, samples: Array(history[(first - historyStart)...]))
        history.removeAll()
        silentFrames = 0
        decision = .inSpeech
        if Double(processedSamples - first) >= configuration.maximumLength * Double(configuration.sampleRate) {
            end(.maximumLength)
        }
    }

    /// Ends the utterance, or dismisses it when it has no voice (`hasVoice`).
    private func end(_ reason: EndpointerDecision.Reason) {
        guard !hasVoice else {
            decision = .ended(reason: reason)
            return
        }
        dismiss()
    }

    /// Drops the utterance in progress for want of a voice and waits for speech again, its last `leadingPadding` of
    /// audio kept as the padding a next start may need.
    private func dismiss() {
        dismissedUtterances += 1
        let kept = min(utterance.samples.count, paddingSamples)
        history = Array(utterance.samples.suffix(kept))
        historyStart = processedSamples - kept
        waitForSpeech()
    }

    /// Forgets the utterance (or candidate start) and its voicing counts: waiting for speech again.
    private func waitForSpeech() {
        decision = .waitingForSpeech
        utterance = PCMBuffer(format: format)
        speechStartSample = nil
        speechEndSample = nil
        candidateStart = nil
        candidateFrames = 0
        silentFrames = 0
        voicedFrames = 0
        voicedPairs = 0
        steadyPairs = 0
    }
}
