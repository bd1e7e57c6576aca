import Foundation
import HarkAudio
import HarkCore

/// Recognises spoken commands of one workspace with PocketSphinx: a factored grammar of the workspace's
/// examples, a small dictionary of just its words, and an acoustic confidence from a second, free phone-loop
/// pass over the same audio.
///
/// Feed one utterance at a time: `startUtterance()`, `process(_:)` as audio arrives, `finishUtterance()`.
/// Decode whole utterances: splitting at pauses forces each piece into a whole command
/// (docs/measurements.md, "Whole utterances").
/// Not Sendable: it owns a C decoder; keep it on one thread or actor.
public final class SpeechRecognizer {
    public let options: RecognitionOptions
    /// The grammar the recogniser listens for (`nil` in `.general` mode).
    public let grammar: SpeechGrammar?
    /// Words the pronunciation source pronounced because the dictionary lacked them.
    public let guessedWords: [String]

    let decoder: PocketSphinxDecoder
    /// The decoder for noisy utterances (`options.noisy`): the same searches with its extra arguments.
    let noisyDecoder: PocketSphinxDecoder?
    /// How `noisyDecoder`'s margins become confidences: `NoisyDecoding.confidenceWithNoisyMeans` when it loaded
    /// the model's noisy-speech means, else the recogniser's `options.confidence`.
    let noisyConfidence: AcousticConfidence
    let mainSearch: String
    let initialMean: [Float]
    /// The utterance as decoded: the input, or (for audio without a noise floor of its own) the microphone
    /// floor's padding, the input with the floor added, padding.
    var audio: [Int16] = []
    /// Samples of real input in the utterance (what `audioSeconds` reports).
    var inputSamples = 0
    /// Samples of added quiet before the input in `audio`.
    var leadingPadding = 0
    var floor = MicrophoneFloor()
    var inUtterance = false
    var decodeSeconds = 0.0
    var decodeCPUSeconds = 0.0

    static let phoneSearch = "phones"

    /// A recogniser for `workspace`'s commands (or, with `options.search == .general`, any English).
    /// Throws `SpeechRecognitionError` for a missing model file or unpronounceable words (naming them all),
    /// `PocketSphinxError` when PocketSphinx rejects its input.
    public init(
        workspace: Workspace, model: SpeechModel = SpeechModel(), options: RecognitionOptions = RecognitionOptions(),
        pronunciations: (any PronunciationSource)? = nil
    ) throws {
        self.options = options
        try model.validate(phoneLanguageModel: options.measuresConfidence, generalLanguageModel: options.search == .general)

        var arguments: [String: String] = RecognitionOptions.defaultDecoderArguments
        arguments["-hmm"] = model.acousticModel.path
        arguments["-cmn"] = options.cepstralMean == .batch ? "batch" : "live"
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("hark-recognizer-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: scratch) }

        var grammar: SpeechGrammar?
        var guessed: [String] = []
        if options.search == .general {
            arguments["-dict"] = model.dictionary.path
        } else {
            let built = SpeechGrammar(workspace: workspace)
            guard !built.templates.isEmpty else { throw SpeechRecognitionError.emptyGrammar(workspace: workspace.source ?? workspace.name) }
            let lexicon = try PronunciationLexicon(words: built.vocabulary, dictionary: model.dictionary, source: pronunciations)
            guessed = lexicon.guessed
            try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
            let dictionary = scratch.appendingPathComponent("words.dict")
            try lexicon.text.write(to: dictionary, atomically: true, encoding: .utf8)
            arguments["-dict"] = dictionary.path
            grammar = built
        }
        for (key, value) in options.decoderArguments { arguments[key] = value }

        let search: String
        var languageModel: URL?
        var finiteStateGrammar: URL?
        switch options.search {
        case .grammar:
            search = "grammar"
            // The grammar as a minimal word automaton rather than JSGF: PocketSphinx's own JSGF expansion copies
            // rules into a search graph up to hundreds of times larger, and its search walks every state of it
            // at every frame (WordAutomaton).
            if let grammar {
                let automaton: WordAutomaton
                do { automaton = try WordAutomaton(grammar: grammar) } catch {
                    throw SpeechRecognitionError.invalidGrammar(workspace: workspace.source ?? workspace.name, reason: error.description)
                }
                let file = scratch.appendingPathComponent("words.fsg")
                try automaton.fsg(name: search).write(to: file, atomically: true, encoding: .utf8)
                finiteStateGrammar = file
            }
        case .languageModel:
            search = "ngram"
            let file = scratch.appendingPathComponent("words.arpa")
            try (grammar?.arpaLanguageModel() ?? "").write(to: file, atomically: true, encoding: .utf8)
            languageModel = file
        case .general:
            search = "general"
            languageModel = model.generalLanguageModel
        }
        func makeDecoder(_ arguments: [String: String]) throws -> PocketSphinxDecoder {
            let decoder = try PocketSphinxDecoder(arguments: arguments.keys.sorted().flatMap { [$0, arguments[$0] ?? ""] })
            if let languageModel {
                try decoder.addLanguageModel(name: search, file: languageModel)
            } else if let finiteStateGrammar {
                try decoder.addFiniteStateGrammar(name: search, file: finiteStateGrammar)
            } else {
                try decoder.addGrammar(name: search, jsgf: grammar?.jsgf ?? "")
            }
            if options.measuresConfidence {
                try decoder.addPhoneLoop(
                    name: Self.phoneSearch, phoneModel: model.phoneLanguageModel, beam: options.phoneLoopBeam,
                    contextIndependent: options.phoneLoopContextIndependent)
            }
            try decoder.useSearch(search)
            return decoder
        }
        mainSearch = search
        decoder = try makeDecoder(arguments)
        if let noisy = options.noisy, options.cepstralMean == .batch {
            var noisyArguments = arguments.merging(noisy.decoderArguments) { $1 }
            if let means = model.noisyMeans { noisyArguments["-mean"] = means.path }
            noisyDecoder = try makeDecoder(noisyArguments)
            noisyConfidence = (model.noisyMeans != nil ? noisy.confidenceWithNoisyMeans : nil) ?? options.confidence
        } else {
            noisyDecoder = nil
            noisyConfidence = options.confidence
        }
        initialMean = decoder.cepstralMean
        self.grammar = grammar
        guessedWords = guessed
    }

    /// Begins an utterance (ending any unfinished one without a result).
    public func startUtterance() throws {
        if inUtterance, options.cepstralMean == .live { try? decoder.endUtterance() }
        audio.removeAll(keepingCapacity: true)
        inputSamples = 0
        leadingPadding = 0
        floor.restart()
        decodeSeconds = 0
        decodeCPUSeconds = 0
        inUtterance = true
        if options.cepstralMean == .live {
            // Live decoding cannot look ahead at the input, so it always gets the floor.
            audio = floor.quiet()
            leadingPadding = audio.count
            decoder.cepstralMean = initialMean
            try decoder.startUtteranceAtFrameZero()
            try decoder.process(audio)
        }
    }

    /// Adds audio to the utterance: 16 kHz mono, in blocks of any size as they arrive.
    public func process(_ buffer: PCMBuffer) throws {
        guard inUtterance else { throw SpeechRecognitionError.noUtterance }
        guard buffer.format == .speech else { throw SpeechRecognitionError.unsupportedFormat(buffer.format) }
        inputSamples += buffer.samples.count
        if options.cepstralMean == .live {
            let samples = floor.adding(to: buffer.samples)
            audio.append(contentsOf: samples)
            let clock = DecodeClock()
            try decoder.process(samples)
            let spent = clock.elapsed()
            decodeSeconds += spent.wall
            decodeCPUSeconds += spent.cpu
        } else {
            audio.append(contentsOf: buffer.samples)
        }
    }

    /// Ends the utterance and returns what was heard, with the acoustic confidence.
    public func finishUtterance() throws -> Transcript {
        guard inUtterance else { throw SpeechRecognitionError.noUtterance }
        inUtterance = false
        if options.cepstralMean == .batch { return try decodeWhole(audio) }
        let clock = DecodeClock()
        try decoder.process(floor.quiet())
        try decoder.endUtterance()
        return try transcript(from: decoder, audio: audio, inputSamples: inputSamples, leadingPadding: leadingPadding,
                              signalToNoise: nil, clock: clock, earlier: (decodeSeconds, decodeCPUSeconds))
    }

    /// Decodes `input` as one whole utterance (batch cepstral mean): what `finishUtterance` does with the
    /// utterance's audio, callable on any audio without starting an utterance, and without touching one in
    /// progress. `UtteranceListener` decodes a prefix of an utterance with it while the endpointer is still
    /// waiting out the trailing silence. The same input always gives the same transcript.
    public func decodeWhole(_ input: [Int16]) throws -> Transcript {
        guard options.cepstralMean == .batch else { throw SpeechRecognitionError.wholeUtteranceNeedsBatchMean }
        let clock = DecodeClock()
        var decoder = self.decoder
        let signalToNoise = SignalToNoise.estimate(input)
        if let noisy = options.noisy, let noisyDecoder, let signalToNoise, signalToNoise < noisy.threshold {
            decoder = noisyDecoder
        }
        var audio = input
        var leadingPadding = 0
        if MicrophoneFloor.lacksNoiseFloor(input) {
            var floor = MicrophoneFloor()
            audio = floor.quiet() + floor.adding(to: input) + floor.quiet()
            leadingPadding = MicrophoneFloor.padding
        }
        try decoder.startUtteranceAtFrameZero()
        try decoder.process(audio, fullUtterance: true)
        try decoder.endUtterance()
        return try transcript(from: decoder, audio: audio, inputSamples: input.count, leadingPadding: leadingPadding,
                              signalToNoise: signalToNoise, clock: clock, earlier: (0, 0))
    }

    /// The transcript of the utterance `decoder` has just ended: words with their times, and the confidence pass.
    private func transcript(
        from decoder: PocketSphinxDecoder, audio: [Int16], inputSamples: Int, leadingPadding: Int, signalToNoise: Double?,
        clock: DecodeClock, earlier: (wall: Double, cpu: Double)
    ) throws -> Transcript {
        let hypothesis = decoder.hypothesis()
        let segments = decoder.segments()
        let frames = decoder.frameCount
        var margin: Double?
        var phones: [PocketSphinxDecoder.Segment] = []
        if options.measuresConfidence, let hypothesis, !hypothesis.text.isEmpty, frames > 0 {
            phones = try phoneLoop(decoder, audio: audio)
            margin = Self.margin(of: segments, reference: phones.reduce(0) { $0 + Double($1.acousticScore) }, frames: frames, decoder: decoder)
        }
        let spent = clock.elapsed()

        let words = segments.compactMap { segment -> Transcript.Word? in
            guard let word = Self.spokenWord(segment.word) else { return nil }
            let wordMargin = phones.isEmpty ? nil : Self.margin(ofWord: segment, against: phones, decoder: decoder)
            // Frames are 10 ms; times count from the start of the input, not of the added quiet, and end with
            // it: a word that ends on the input's last sample ran on into the quiet appended after it (an
            // eSpeak clip of 0.80 s had "light" end at 0.85 s).
            let offset = Double(leadingPadding) / Double(PCMFormat.speech.sampleRate)
            let length = Double(inputSamples) / Double(PCMFormat.speech.sampleRate)
            return Transcript.Word(text: word, start: min(length, max(0, Double(segment.startFrame) / 100 - offset)),
                                   end: min(length, max(0, Double(segment.endFrame + 1) / 100 - offset)), margin: wordMargin)
        }
        let text = hypothesis?.text.split(separator: " ").compactMap { Self.spokenWord(String($0)) }.joined(separator: " ") ?? ""
        let noisy = decoder !== self.decoder
        let calibration = noisy ? noisyConfidence : options.confidence
        let confidence: Double =
            if text.isEmpty { 0 }
            else if let margin { calibration.confidence(margin: margin) }
            else { options.measuresConfidence ? 0 : 1 }
        var transcript = Transcript(
            text: text, words: words, acousticConfidence: confidence, acousticMargin: margin,
            signalToNoise: signalToNoise, noisyDecoding: noisy,
            audioSeconds: Double(inputSamples) / Double(PCMFormat.speech.sampleRate),
            decodeMilliseconds: (earlier.wall + spent.wall) * 1000, decodeCPUMilliseconds: (earlier.cpu + spent.cpu) * 1000)
        let start = min(leadingPadding, audio.count)
        transcript.recording = Array(audio[start..<min(audio.count, start + inputSamples)])
        return transcript
    }

    /// What has been heard so far in the unfinished utterance, for showing while the speaker still talks
    /// (push-to-talk in the browser). With batch cepstral mean the audio so far is decoded as a whole,
    /// without the confidence pass: it costs a fraction of the final decode and may change when the
    /// utterance ends. Empty when nothing has been recognised yet.
    public func partialText() throws -> String {
        guard inUtterance else { throw SpeechRecognitionError.noUtterance }
        if options.cepstralMean == .batch {
            guard !audio.isEmpty else { return "" }
            // A copy of the floor: the final decoding must add the very floor it would have without partials, or
            // a clip streamed with partials (push-to-talk) and the same clip decoded whole get different noise,
            // and on a fragile clip different words (flite slt's "turn on the light": right whole, "picture
            // camera out" streamed).
            var partialFloor = floor
            let padded = MicrophoneFloor.lacksNoiseFloor(audio) ? partialFloor.quiet() + partialFloor.adding(to: audio) : audio
            try decoder.startUtteranceAtFrameZero()
            try decoder.process(padded, fullUtterance: true)
            try decoder.endUtterance()
        }
        let text = decoder.hypothesis()?.text ?? ""
        return text.split(separator: " ").compactMap { Self.spokenWord(String($0)) }.joined(separator: " ")
    }

    /// Recognises one whole utterance.
    public func recognize(_ buffer: PCMBuffer) throws -> Transcript {
        try startUtterance()
        try process(buffer)
        return try finishUtterance()
    }

    /// Decodes the utterance's audio again with the free phone loop, from the same starting CMN: its phones, whose
    /// acoustic scores are the reference the grammar path's are measured against.
    func phoneLoop(_ decoder: PocketSphinxDecoder, audio: [Int16]) throws -> [PocketSphinxDecoder.Segment] {
        try decoder.useSearch(Self.phoneSearch)
        defer { try? decoder.useSearch(mainSearch) }
        if options.cepstralMean == .live { decoder.cepstralMean = initialMean }
        try decoder.startUtterance()
        try decoder.process(audio, fullUtterance: options.cepstralMean == .batch)
        try decoder.endUtterance()
        return decoder.segments()
    }

    /// The grammar path's acoustic score over `segments` minus the phone loop's score `reference` over the same
    /// frames, per frame as a natural log, with the phone insertion bonus taken out.
    static func margin(
        of segments: [PocketSphinxDecoder.Segment], reference: Double, frames: Int, decoder: PocketSphinxDecoder
    ) -> Double {
        guard frames > 0 else { return 0 }
        let grammar = segments.reduce(0) { $0 + Double($1.acousticScore) }
        // 5prealpha keeps acoustic scores shifted right by SENSCR_SHIFT (10 bits): scale back to log-likelihoods.
        return (grammar - reference) / Double(frames) * decoder.naturalLog(1) * 1024
            - insertionBonus(of: segments, decoder: decoder) / Double(frames)
    }

    /// One word's margin: its grammar score against the phone loop's share of its frames (`phoneScore`).
    static func margin(ofWord word: PocketSphinxDecoder.Segment, against phones: [PocketSphinxDecoder.Segment], decoder: PocketSphinxDecoder) -> Double {
        margin(of: [word], reference: phoneScore(of: phones, from: word.startFrame, to: word.endFrame),
               frames: word.endFrame - word.startFrame + 1, decoder: decoder)
    }

    /// The phone loop's acoustic score over frames `from...to`: phones wholly inside count fully, phones across an
    /// edge by the share of their frames inside.
    static func phoneScore(of phones: [PocketSphinxDecoder.Segment], from: Int, to: Int) -> Double {
        phones.reduce(0.0) { sum, phone in
            let overlap = min(to, phone.endFrame) - max(from, phone.startFrame) + 1
            guard overlap > 0 else { return sum }
            return sum + Double(phone.acousticScore) * Double(overlap) / Double(phone.endFrame - phone.startFrame + 1)
        }
    }

    /// The part of a grammar path's acoustic score that is the phone insertion bonus, as a natural log. The
    /// grammar search adds `-pip` (scaled by `-lw`) to the path score at every phone it enters, and the segments'
    /// acoustic scores carry it; the phone loop, weighted by its phone LM, does not. With the usual `-pip 1` it is
    /// zero; with the noisy-speech setting's `-pip 2` it would lift every margin by about 0.3 per frame (a 6 s
    /// order), and out-of-domain speech with it, so it is taken out and the calibration holds for both decoders.
    static func insertionBonus(of segments: [PocketSphinxDecoder.Segment], decoder: PocketSphinxDecoder) -> Double {
        let pip = decoder.floatSetting("-pip")
        guard pip > 0, pip != 1 else { return 0 }
        // Fillers (<sil>, [NOISE]) are one-phone words of the dictionary's filler section.
        let phones = segments.reduce(0) { $0 + max(1, decoder.pronunciation(of: $1.word)?.split(separator: " ").count ?? 1) }
        return Double(phones) * log(pip) * decoder.floatSetting("-lw")
    }

    /// A dictionary word as text: fillers and sentence markers dropped, variant numbers removed
    /// ("what's(2)" → "what's").
    static func spokenWord(_ word: String) -> String? {
        if word.isEmpty || word.hasPrefix("<") || word.hasPrefix("[") || word.hasPrefix("++") || word == "(NULL)" { return nil }
        if word.hasSuffix(")"), let paren = word.lastIndex(of: "(") { return String(word[..<paren]) }
        return word
    }
}
