import Foundation
import HarkAudio
import HarkCore

/// Listens to an endless 16 kHz mono stream for the wake phrase ("hey hark, turn on the light").
///
/// Two passes (docs/wake-phrase.md). PocketSphinx's keyphrase search runs on every speech frame: the
/// phrase's triphone HMMs against a free phone loop, firing when the phrase is at least `keyphraseThreshold`
/// as likely as the best phone sequence. It is cheap, but on its own it wakes falsely on speech that merely
/// sounds alike. So each hit is checked again by a second decoder: the audio around it (the phrase plus
/// `preRollSeconds`) is decoded by a grammar of just the phrase and by a free phone loop, and for every word
/// of the phrase the per-frame difference of their acoustic scores (the `AcousticConfidence` margin) is
/// taken. The weakest word's margin plus `confirmationDurationWeight` × the hit's length must reach
/// `confirmationThreshold`: a short hit is rarely the whole phrase.
///
/// Feed audio as it arrives, in blocks of any size: detection happens at fixed stream positions (every
/// 50 ms), so the result does not depend on how the stream was cut. Not Sendable: it owns C decoders;
/// keep it on one thread or actor.
public final class WakePhraseSpotter {
    /// The phrase listened for, normalised (lower case, single spaces).
    public let phrase: String
    public let settings: WakeSettings
    /// Words of the phrase the pronunciation source pronounced because the dictionary lacked them.
    public let guessedWords: [String]
    /// Seconds of audio processed since the spotter was made (not reset by `reset()`).
    public private(set) var processedSeconds = 0.0
    /// Seconds spent processing them, both passes.
    public private(set) var processingSeconds = 0.0
    /// `processingSeconds / processedSeconds`: must stay well below 1 on the appliance's CPU.
    public var realTimeFactor: Double { processedSeconds > 0 ? processingSeconds / processedSeconds : 0 }

    /// The keyphrase search, in one utterance that lasts as long as the stream (restarted every
    /// `restartInterval`). Its front end drops non-speech frames (PocketSphinx's voice-activity detector), so
    /// the live cepstral mean follows the voices, not the silence between them: measured on the dev streams,
    /// keeping every frame spotted 40% of the phrases at 1e-30 against 56% (eSpeak NG clean 18% vs 72%).
    let decoder: PocketSphinxDecoder
    /// The second pass's grammar and phone loop: a decoder of its own, so the keyphrase utterance never stops,
    /// with every frame kept and batch CMN over the hit's audio, as the recogniser's confidence pass has.
    let confirmer: PocketSphinxDecoder
    let initialMean: [Float]
    /// The third look at a hit that passed the second (`WakeVerifier`), when the settings name one.
    let verifier: WakeVerifier?
    var history: WakeAudioHistory
    /// Samples fed since the start of the stream.
    var streamSamples = 0
    /// Because silence is dropped, frame numbers are not stream time: after every 50 ms piece, how many frames
    /// the keyphrase utterance had searched and at which stream position (the last few seconds' worth).
    var frameClock: [(frames: Int, position: Int)] = []
    /// How many of the keyphrase utterance's detections have been handled: the search keeps every detection
    /// of its utterance, newest first, and their segment frames drift (see `check()`), so they are told
    /// apart by count.
    var handledDetections = 0
    /// `settleSeconds` in frames, the keyphrase search's `-kws_delay`.
    let settleFrames: Int
    /// Every keyphrase hit with its second-pass result, accepted or not, when `recordsCandidates` is set
    /// (for the evaluation in scripts/wake-eval.sh, which needs the rejected hits too).
    var candidates: [WakeCandidate] = []
    var recordsCandidates = false

    static let keyphraseSearch = "wake"
    static let phraseSearch = "phrase"
    static let phoneSearch = "phones"
    static let samplesPerFrame = 160
    /// Frames the keyphrase search lags the audio: the voice-activity detector's pre-speech buffer
    /// (`-vad_prespeech`, 20) and the feature window's look-ahead. Calibrated on the dev streams.
    static let frontEndDelayFrames = 0
    /// Keyphrase detections are looked at every 50 ms of stream, at fixed positions.
    static let checkInterval = 800
    /// The keyphrase utterance is restarted after this many frames (5 min of speech), re-feeding the last seconds,
    /// so its detection list and frame counter stay bounded on an appliance that listens for months.
    static let restartInterval = 100 * 300

    /// A spotter for `phrase` (e.g. `settings.phrase`) whose words the dictionary lacks are pronounced by
    /// eSpeak NG's letter-to-sound rules (`CustomThenESpeak` without a custom dictionary).
    public convenience init(phrase: String, model: SpeechModel = SpeechModel(), settings: WakeSettings = WakeSettings(), verifier: WakeVerifier? = nil) throws {
        try self.init(phrase: phrase, model: model, settings: settings, pronunciations: try CustomThenESpeak(customDictionary: nil), verifier: verifier)
    }

    /// A spotter for `phrase`. Words the model's dictionary lacks go to `pronunciations`; with none, or when it
    /// has no pronunciation either, the error names the words (`WakeError.unknownWords`). Throws
    /// `SpeechRecognitionError` for missing model files, `PocketSphinxError` when PocketSphinx rejects its input.
    /// `verifier` is required when the settings name one (`WakeError.noVerifier`), and used only then.
    public init(phrase: String, model: SpeechModel, settings: WakeSettings, pronunciations: (any PronunciationSource)?, verifier: WakeVerifier? = nil) throws {
        let words = Self.words(of: phrase)
        guard !words.isEmpty else { throw WakeError.emptyPhrase(phrase) }
        if let name = settings.verifier, verifier == nil { throw WakeError.noVerifier(name) }
        self.verifier = settings.verifier == nil ? nil : verifier
        self.phrase = words.joined(separator: " ")
        if let verifier = self.verifier, verifier.phrase != self.phrase {
            throw WakeError.verifierForAnotherPhrase(verifier: verifier.phrase, phrase: self.phrase)
        }
        self.settings = settings
        try model.validate(phoneLanguageModel: true, generalLanguageModel: false)

        let lexicon: PronunciationLexicon
        // A plain `catch` and a `switch`, not a pattern in the `catch`: Swift 6.0.3 (Debian 13's swiftlang)
        // crashes in SIL verification on a pattern catch of a typed error inside a class initialiser.
        do {
            lexicon = try PronunciationLexicon(words: Array(Set(words)), dictionary: model.dictionary, source: pronunciations)
        } catch {
            switch error {
            case .unknownWords(let unknown, let dictionary, let reason):
                throw WakeError.unknownWords(unknown, phrase: phrase, reason: "not in \(dictionary); \(reason)")
            default:
                throw error
            }
        }
        guessedWords = lexicon.guessed

        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("hark-wake-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let dictionary = scratch.appendingPathComponent("wake.dict")
        try lexicon.text.write(to: dictionary, atomically: true, encoding: .utf8)

        settleFrames = Int((settings.settleSeconds * 100).rounded())
        var means: [String] = []
        if settings.noisyMeans {
            guard let noisy = model.noisyMeans else { throw WakeError.noNoisyMeans }
            means = ["-mean", noisy.path]
        }
        // Live CMN: the stream never ends, so there is no whole utterance to take a mean over.
        decoder = try PocketSphinxDecoder(arguments: [
            "-hmm", model.acousticModel.path, "-dict", dictionary.path, "-cmn", "live", "-remove_silence", "yes",
        ] + means)
        try decoder.addKeyphrase(
            name: Self.keyphraseSearch, phrase: self.phrase, threshold: settings.keyphraseThreshold,
            delayFrames: settleFrames, beam: settings.keyphraseBeam)
        confirmer = try PocketSphinxDecoder(arguments: [
            "-hmm", model.acousticModel.path, "-dict", dictionary.path, "-cmn", "batch", "-remove_silence", "no",
            "-beam", "1e-80", "-pbeam", "1e-80", "-wbeam", "1e-50",
        ] + means)
        try confirmer.addGrammar(name: Self.phraseSearch, jsgf: "#JSGF V1.0;\ngrammar wake;\npublic <wake> = \(self.phrase);\n")
        try confirmer.addPhoneLoop(name: Self.phoneSearch, phoneModel: model.phoneLanguageModel, beam: 1e-20, contextIndependent: true)
        initialMean = decoder.cepstralMean
        let rate = Double(PCMFormat.speech.sampleRate)
        history = WakeAudioHistory(capacity: Int((settings.preRollSeconds + settings.maximumPhraseSeconds + settings.settleSeconds + 2) * rate) + WakeFeatures.leadSamples)
        try decoder.useSearch(Self.keyphraseSearch)
        try decoder.startUtteranceAtFrameZero()
    }

    /// Listens to the next stretch of the stream (16 kHz mono, any length). Returns the wake phrase if it was
    /// heard and confirmed in this audio; a second phrase in the same buffer is not reported.
    public func process(_ buffer: PCMBuffer) throws -> WakeDetection? {
        guard buffer.format == .speech else { throw WakeError.unsupportedFormat(buffer.format) }
        let clock = ContinuousClock()
        let started = clock.now
        defer {
            processingSeconds += started.duration(to: clock.now).timeInterval
            processedSeconds += buffer.duration
        }
        history.trim()
        var detection: WakeDetection?
        var offset = 0
        let samples = buffer.samples
        while offset < samples.count {
            // Up to the next check position, so checks fall at the same stream positions however it is cut.
            let next = (streamSamples / Self.checkInterval + 1) * Self.checkInterval
            let piece = samples[offset..<min(samples.count, offset + next - streamSamples)]
            history.append(piece)
            try decoder.process(Array(piece))
            streamSamples += piece.count
            offset += piece.count
            guard streamSamples == next else { continue }
            tick()
            if let found = try check(), detection == nil { detection = found }
            if (frameClock.last?.frames ?? 0) >= Self.restartInterval { try restartKeyphraseSearch() }
        }
        if var found = detection {
            found.commandAudio = PCMBuffer(format: .speech, samples: Array(history.slice(from: Self.position(found.commandStart), to: streamSamples)))
            return found
        }
        return nil
    }

    /// Forgets the stream: the next buffer is time 0, and the cepstral mean returns to the model's.
    public func reset() throws {
        try? decoder.endUtterance()
        try decoder.useSearch(Self.keyphraseSearch)
        decoder.cepstralMean = initialMean
        history.removeAll()
        streamSamples = 0
        frameClock.removeAll()
        handledDetections = 0
        try decoder.startUtteranceAtFrameZero()
    }

    /// The words of a phrase as the dictionary spells them: lower case, split at spaces and punctuation
    /// ("Okay, Hark!" → okay hark), apostrophes kept ("what's").
    static func words(of phrase: String) -> [String] {
        phrase.lowercased()
            .split(whereSeparator: { !($0.isLetter || $0.isNumber || $0 == "'") })
            .map { String($0).trimmingCharacters(in: CharacterSet(charactersIn: "'")) }
            .filter { !$0.isEmpty }
    }

    /// Looks at the settled keyphrase detections; the best new one is checked by the second pass.
    ///
    /// With silence dropped, 5prealpha's segment frames are not the utterance's frame numbers (they run ahead
    /// by an offset that grows as silence is dropped), so a detection is timed by when it settled instead: the search reports
    /// a detection once it has searched `settle` frames past its end, so the end is that many frames before
    /// the search's position at this check (±2.5 frames, half a check interval); the length is ef − sf.
    private func check() throws -> WakeDetection? {
        let detections = decoder.keyphraseDetections()
        let fresh = detections.prefix(max(0, detections.count - handledDetections))
        guard let best = fresh.max(by: { $0.ratio < $1.ratio }) else { return nil }
        handledDetections = detections.count
        let searched = frameClock.count > 1 ? (frameClock[frameClock.count - 2].frames + frameClock[frameClock.count - 1].frames) / 2 : decoder.frameCount
        let endFrame = searched - settleFrames
        let end = position(ofFrame: endFrame)
        let start = position(ofFrame: endFrame - (best.endFrame - best.startFrame + 1))
        let candidate = try confirm(start: start, end: end, keyphraseScore: decoder.keyphraseLog10(best.ratio))
        if recordsCandidates { candidates.append(candidate) }
        guard candidate.accepted else { return nil }
        return WakeDetection(
            phrase: phrase, start: Self.seconds(start), time: Self.seconds(end), keyphraseScore: candidate.keyphraseScore,
            confirmationScore: candidate.score, commandStart: Self.seconds(candidate.commandStart), commandAudio: PCMBuffer(format: .speech))
    }

    /// Notes how far the keyphrase search has got at this stream position.
    private func tick() {
        frameClock.append((decoder.frameCount, streamSamples))
        let kept = history.capacity / Self.checkInterval
        if frameClock.count > 2 * kept { frameClock.removeFirst(frameClock.count - kept) }
    }

    /// The stream position where keyphrase frame `frame` began. Frames run contiguously while there is
    /// speech (and the voice-activity detector's padding around it), so it counts back from the first
    /// moment the search had got past the frame, less the front end's delay.
    func position(ofFrame frame: Int) -> Int {
        guard let reached = frameClock.first(where: { $0.frames > frame }) else { return streamSamples }
        return reached.position - (reached.frames - frame + Self.frontEndDelayFrames) * Self.samplesPerFrame
    }

    /// Ends the keyphrase utterance and starts a new one that first hears the last seconds again, so a phrase
    /// spoken across the restart is still whole in it (a phrase handled just before may be heard again then;
    /// at one restart per 5 minutes of speech, that is accepted).
    private func restartKeyphraseSearch() throws {
        try decoder.endUtterance()
        try decoder.startUtteranceAtFrameZero()
        frameClock.removeAll()
        handledDetections = 0
        let overlap = Int((settings.maximumPhraseSeconds + settings.settleSeconds + 0.5) * Double(PCMFormat.speech.sampleRate))
        var position = max(history.firstIndex, streamSamples - overlap)
        while position < streamSamples {
            let next = min(streamSamples, position + Self.checkInterval)
            try decoder.process(Array(history.slice(from: position, to: next)))
            frameClock.append((decoder.frameCount, next))
            position = next
        }
    }

    static func seconds(_ samples: Int) -> Double { Double(samples) / Double(PCMFormat.speech.sampleRate) }
    static func position(_ seconds: Double) -> Int { Int((seconds * Double(PCMFormat.speech.sampleRate)).rounded()) }
}
