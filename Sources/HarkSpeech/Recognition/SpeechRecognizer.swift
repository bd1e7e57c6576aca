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
    /// The second judge of `noisyDecoder`'s utterances, on the margin over the words alone
    /// (`NoisyDecoding.wordsConfidenceWithNoisyMeans`); nil: none.
    let noisyWordsConfidence: AcousticConfidence?
    /// The decoder for speech in moderate noise (`options.moderate`): the usual settings with the model's
    /// moderate-noise means; nil without them. Its phone-loop partner, and how its margins become confidences.
    let moderateDecoder: PocketSphinxDecoder?
    let moderatePhoneDecoder: PocketSphinxDecoder?
    let moderateConfidence: AcousticConfidence
    /// Decoders of the phone loop alone, run alongside `decoder` and `noisyDecoder` (on another thread for a whole
    /// utterance, `RecognitionOptions.phoneLoopAlongside`; block by block when streaming).
    let phoneDecoder: PocketSphinxDecoder?
    let noisyPhoneDecoder: PocketSphinxDecoder?
    /// The general English decoding of `options.anyEnglish` (nil without that judge), shared in the process.
    let english: EnglishReference?
    /// The decoder of `options.secondReading` (a trigram model of the workspace's sentences), nil when it does not run.
    let readingDecoder: PocketSphinxDecoder?
    /// Its partner for speech in moderate noise (the moderate-noise means), nil without the moderate-noise decoder.
    let moderateReadingDecoder: PocketSphinxDecoder?
    /// The reading's trigram model, which also says how much its words read like the workspace's sentences
    /// (`Transcript.secondReadingFluency`); nil when the reading does not run.
    let readingModel: ARPALanguageModel?
    let mainSearch: String
    let initialMean: [Float]
    /// Streaming mean: the decoder pair chosen for the utterance once its first `meanSeconds` have arrived (nil
    /// before), and the SNR estimate that chose it.
    var streamingPair: (words: PocketSphinxDecoder, phones: PocketSphinxDecoder?)?
    var streamingSignalToNoise: Double?
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
        // The judge against any English needs the whole utterance with the batch mean, the grammar's path and the
        // acoustic margin it rules on.
        let judgesEnglish = options.anyEnglish != nil && options.search == .grammar && options.cepstralMean == .batch
            && options.measuresConfidence
        try model.validate(phoneLanguageModel: options.measuresConfidence, generalLanguageModel: options.search == .general || judgesEnglish)

        var arguments: [String: String] = RecognitionOptions.defaultDecoderArguments
        arguments["-hmm"] = model.acousticModel.path
        arguments["-cmn"] = options.cepstralMean.isLive ? "live" : "batch"
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("hark-recognizer-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: scratch) }

        var grammar: SpeechGrammar?
        // The usual decoder's grammar also takes the examples with courtesy words around them; the noisy-speech and
        // moderate-noise decoders' do not (docs/speech.md, "Courtesy words": in noise the extra words fit the noise).
        var courteous: SpeechGrammar?
        var guessed: [String] = []
        var pronunciationCounts: [String: Int] = [:]
        if options.search == .general {
            arguments["-dict"] = model.dictionary.path
        } else {
            let built = SpeechGrammar(workspace: workspace)
            guard !built.templates.isEmpty else { throw SpeechRecognitionError.emptyGrammar(workspace: workspace.source ?? workspace.name) }
            if options.search == .grammar, options.courtesyWords, SpeechGrammar.Courtesy.applies(to: workspace) {
                courteous = built.withCourtesy()
            }
            let lexicon = try PronunciationLexicon(words: (courteous ?? built).vocabulary, dictionary: model.dictionary, source: pronunciations)
            guessed = lexicon.guessed
            for entry in lexicon.entries { pronunciationCounts[entry.word, default: 0] += 1 }
            try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
            let dictionary = scratch.appendingPathComponent("words.dict")
            let branchWords = options.search == .grammar && options.otherSpeech != nil ? OtherSpeech.dictionaryText : ""
            let valueWords = options.search == .grammar && options.otherValue != nil ? OtherValue.dictionaryText : ""
            try (lexicon.text + branchWords + valueWords).write(to: dictionary, atomically: true, encoding: .utf8)
            arguments["-dict"] = dictionary.path
            grammar = built
        }
        for (key, value) in options.decoderArguments { arguments[key] = value }

        let search: String
        var languageModel: URL?
        var finiteStateGrammar: URL?
        var usualGrammar: URL?
        switch options.search {
        case .grammar:
            search = "grammar"
            // The grammar as a minimal word automaton rather than JSGF: PocketSphinx's own JSGF expansion copies
            // rules into a search graph up to hundreds of times larger, and its search walks every state of it
            // at every frame (WordAutomaton).
            if let grammar {
                func automaton(of grammar: SpeechGrammar) throws -> WordAutomaton {
                    do { return try WordAutomaton(grammar: grammar) } catch {
                        throw SpeechRecognitionError.invalidGrammar(workspace: workspace.source ?? workspace.name, reason: error.description)
                    }
                }
                let plain = try automaton(of: grammar)
                let file = scratch.appendingPathComponent("words.fsg")
                // Each word's other pronunciations are written into the grammar file here, not added by PocketSphinx
                // as it loads it (`-fsgusealtpron`), which takes one pass over every transition per such word: a
                // fifth of a large workspace's start-up (docs/speech.md, "Memory and start-up").
                arguments["-fsgusealtpron"] = "no"
                func withVariants(_ fsg: String) -> String {
                    Self.addingAlternatePronunciations(to: fsg, counts: pronunciationCounts)
                }
                try withVariants(plain.fsg(name: search)).write(to: file, atomically: true, encoding: .utf8)
                finiteStateGrammar = file
                // The usual decoder (clean speech) searches with the branch for other speech and the courtesy words; the
                // moderate-noise and noisy-speech decoders without either (docs/speech.md, "Speech outside the grammar":
                // in noise the branch fits the noise and takes real commands through the endpointer's cuts). With
                // `options.otherValue` (an experiment, off by default) its grammar also has the loop in values' places.
                var usual = try courteous.map(automaton(of:))
                if options.otherValue != nil { usual = try automaton(of: (courteous ?? grammar).withOtherValues()) }
                if options.otherSpeech != nil || usual != nil {
                    let fsg = (usual ?? plain).fsg(name: search, loop: options.otherSpeech?.loop, otherValue: options.otherValue?.loop)
                    let file = scratch.appendingPathComponent("words-usual.fsg")
                    try withVariants(fsg).write(to: file, atomically: true, encoding: .utf8)
                    usualGrammar = file
                }
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
        // Settings in a fixed order, so that every decoder of the same settings is configured alike.
        func newDecoder(_ arguments: [String: String]) throws -> PocketSphinxDecoder {
            try PocketSphinxDecoder(arguments: arguments.keys.sorted().flatMap { [$0, arguments[$0] ?? ""] })
        }
        func addPhoneLoop(to decoder: PocketSphinxDecoder) throws {
            try decoder.addPhoneLoop(
                name: Self.phoneSearch, phoneModel: model.phoneLanguageModel, beam: options.phoneLoopBeam,
                contextIndependent: options.phoneLoopContextIndependent)
        }
        func makeDecoder(_ arguments: [String: String], usual: Bool = true) throws -> PocketSphinxDecoder {
            let decoder = try newDecoder(arguments)
            if let languageModel {
                try decoder.addLanguageModel(name: search, file: languageModel)
            } else if let finiteStateGrammar {
                try decoder.addFiniteStateGrammar(name: search, file: (usual ? usualGrammar : nil) ?? finiteStateGrammar)
            } else {
                try decoder.addGrammar(name: search, jsgf: grammar?.jsgf ?? "")
            }
            if options.measuresConfidence { try addPhoneLoop(to: decoder) }
            try decoder.useSearch(search)
            return decoder
        }
        mainSearch = search
        decoder = try makeDecoder(arguments)
        // A decoder of the phone loop alone, for streaming: the same model, means and front end as its partner. It
        // never searches the grammar, so it is not given one: PocketSphinx builds a grammar's search tree when the
        // grammar is added, and for a large workspace that tree is much of a decoder's memory and start-up
        // (docs/speech.md, "Memory and start-up").
        func makePhoneDecoder(_ arguments: [String: String]) throws -> PocketSphinxDecoder? {
            guard options.measuresConfidence, options.cepstralMean.isStreaming || (options.cepstralMean == .batch && options.phoneLoopAlongside)
            else { return nil }
            let phones = try newDecoder(arguments)
            try addPhoneLoop(to: phones)
            try phones.useSearch(Self.phoneSearch)
            return phones
        }
        phoneDecoder = try makePhoneDecoder(arguments)
        if let noisy = options.effectiveNoisy {
            var noisyArguments = arguments.merging(noisy.decoderArguments) { $1 }
            if let means = model.noisyMeans { noisyArguments["-mean"] = means.path }
            noisyDecoder = try makeDecoder(noisyArguments, usual: false)
            noisyPhoneDecoder = try makePhoneDecoder(noisyArguments)
            noisyConfidence = (model.noisyMeans != nil ? noisy.confidenceWithNoisyMeans : nil) ?? options.confidence
            noisyWordsConfidence = model.noisyMeans != nil ? noisy.wordsConfidenceWithNoisyMeans : nil
        } else {
            noisyDecoder = nil
            noisyPhoneDecoder = nil
            noisyConfidence = options.confidence
            noisyWordsConfidence = nil
        }
        if let moderate = options.effectiveModerate, let means = model.moderateMeans {
            var moderateArguments = arguments
            moderateArguments["-mean"] = means.path
            moderateDecoder = try makeDecoder(moderateArguments, usual: false)
            moderatePhoneDecoder = try makePhoneDecoder(moderateArguments)
            moderateConfidence = moderate.confidence
        } else {
            moderateDecoder = nil
            moderatePhoneDecoder = nil
            moderateConfidence = options.confidence
        }
        if judgesEnglish, let judge = options.anyEnglish {
            var english = arguments
            english["-dict"] = model.dictionary.path
            for (key, value) in judge.decoderArguments { english[key] = value }
            self.english = try EnglishReference.shared(arguments: english, languageModel: model.generalLanguageModel)
        } else {
            self.english = nil
        }
        // The second reading: the usual decoder's settings and dictionary (cheaper settings cost paraphrases for little
        // processor time: docs/speech.md, "A second reading"), the workspace's words in any order.
        if options.secondReading != .off, options.search == .grammar, options.cepstralMean == .batch, let grammar,
           workspace.hasSeveralCommands {
            let trigram = grammar.trigramModel()
            let file = scratch.appendingPathComponent("reading.arpa")
            try trigram.arpa.write(to: file, atomically: true, encoding: .utf8)
            func makeReadingDecoder(_ arguments: [String: String]) throws -> PocketSphinxDecoder {
                let reading = try newDecoder(arguments)
                try reading.addLanguageModel(name: SecondReading.search, file: file)
                try reading.useSearch(SecondReading.search)
                return reading
            }
            readingDecoder = try makeReadingDecoder(arguments)
            readingModel = trigram
            // Speech in moderate noise is read too, with the moderate-noise means as its grammar pass is.
            if moderateDecoder != nil, let means = model.moderateMeans {
                moderateReadingDecoder = try makeReadingDecoder(arguments.merging(["-mean": means.path]) { $1 })
            } else {
                moderateReadingDecoder = nil
            }
        } else {
            readingDecoder = nil
            moderateReadingDecoder = nil
            readingModel = nil
        }
        initialMean = decoder.cepstralMean
        self.grammar = grammar
        guessedWords = guessed
    }

    /// Begins an utterance (ending any unfinished one without a result).
    public func startUtterance() throws {
        if inUtterance, options.cepstralMean == .live { try? decoder.endUtterance() }
        if inUtterance, let pair = streamingPair {
            try? pair.words.endUtterance()
            try? pair.phones?.endUtterance()
        }
        audio.removeAll(keepingCapacity: true)
        inputSamples = 0
        leadingPadding = 0
        floor.restart()
        decodeSeconds = 0
        decodeCPUSeconds = 0
        streamingPair = nil
        streamingSignalToNoise = nil
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
        } else if case .streaming(let meanSeconds) = options.cepstralMean {
            let clock = DecodeClock()
            var rest = buffer.samples[...]
            if streamingPair == nil {
                // The mean is always that of exactly the first `meanSeconds`, whatever the block sizes.
                let first = Int((meanSeconds * Double(PCMFormat.speech.sampleRate)).rounded())
                let taken = min(rest.count, max(0, first - audio.count))
                audio.append(contentsOf: rest.prefix(taken))
                rest = rest.dropFirst(taken)
                if audio.count >= first { try beginStreaming(final: false) }
            }
            if streamingPair != nil, !rest.isEmpty {
                let samples = leadingPadding > 0 ? floor.adding(to: Array(rest)) : Array(rest)
                audio.append(contentsOf: samples)
                try feedStreaming(samples)
            }
            let spent = clock.elapsed()
            decodeSeconds += spent.wall
            decodeCPUSeconds += spent.cpu
        } else {
            audio.append(contentsOf: buffer.samples)
        }
    }

    /// Streaming mean: the utterance's first stretch (`audio`, all of it when `final`) has arrived. Chooses the
    /// decoder by its SNR estimate, adds the microphone floor if it has none (as `decodeWhole` does), starts both
    /// decoders with the front end's mean of it and feeds it to them.
    private func beginStreaming(final: Bool) throws {
        let input = audio
        let signalToNoise = SignalToNoise.estimate(input)
        let lacksFloor = MicrophoneFloor.lacksNoiseFloor(input)
        let pair = decoders(for: signalToNoise, noiseFloor: !lacksFloor)
        var padded = input
        if lacksFloor {
            padded = floor.quiet() + floor.adding(to: input)
            if final { padded += floor.quiet() }
            leadingPadding = MicrophoneFloor.padding
        }
        audio = padded
        let mean = pair.words.frontEndMean(of: padded)
        for decoder in [pair.words, pair.phones].compactMap({ $0 }) {
            try decoder.startUtteranceAtFrameZero()
            if !mean.isEmpty { decoder.cepstralMean = mean }
            try decoder.process(padded)
        }
        streamingPair = pair
        streamingSignalToNoise = signalToNoise
    }

    /// The decoder for audio whose SNR estimate is `signalToNoise` (the noisy-speech one below `options.noisy`'s
    /// threshold, else the moderate-noise one below `options.moderate`'s), and its phone-loop partner when there is one.
    /// Audio without a noise floor of its own (`MicrophoneFloor.lacksNoiseFloor`: a synthetic voice, digital silence)
    /// has no noise to speak of, whatever the estimate says (with no room in it, it measures the voice's own range: an
    /// eSpeak NG command cut to its words reads 24 dB), so it never goes to the moderate-noise decoder.
    private func decoders(for signalToNoise: Double?, noiseFloor: Bool) -> (words: PocketSphinxDecoder, phones: PocketSphinxDecoder?) {
        if let noisy = options.noisy, let noisyDecoder, let signalToNoise, signalToNoise < noisy.threshold {
            return (noisyDecoder, noisyPhoneDecoder)
        }
        if noiseFloor, let moderate = options.moderate, let moderateDecoder, let signalToNoise, signalToNoise < moderate.below {
            return (moderateDecoder, moderatePhoneDecoder)
        }
        return (decoder, phoneDecoder)
    }

    private func feedStreaming(_ samples: [Int16]) throws {
        guard let pair = streamingPair else { return }
        try pair.words.process(samples)
        try pair.phones?.process(samples)
    }

    /// Ends the utterance and returns what was heard, with the acoustic confidence.
    public func finishUtterance() throws -> Transcript {
        guard inUtterance else { throw SpeechRecognitionError.noUtterance }
        inUtterance = false
        if options.cepstralMean == .batch { return try decodeWhole(audio) }
        if options.cepstralMean.isStreaming {
            let clock = DecodeClock()
            if streamingPair == nil {
                guard !audio.isEmpty else {
                    return Transcript(text: "", words: [], acousticConfidence: 0, acousticMargin: nil, audioSeconds: 0, decodeMilliseconds: 0)
                }
                try beginStreaming(final: true)
            } else if leadingPadding > 0 {
                let quiet = floor.quiet()
                audio.append(contentsOf: quiet)
                try feedStreaming(quiet)
            }
            guard let pair = streamingPair else { throw SpeechRecognitionError.noUtterance }
            try pair.words.endUtterance()
            try pair.phones?.endUtterance()
            return try transcript(from: pair.words, audio: audio, inputSamples: inputSamples, leadingPadding: leadingPadding,
                                  signalToNoise: streamingSignalToNoise, clock: clock, earlier: (decodeSeconds, decodeCPUSeconds),
                                  phones: pair.phones?.segments())
        }
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
    ///
    /// `background`: audio heard just before `input` (the room before the speaker started), not decoded; the
    /// front end runs over it first, so PocketSphinx's noise estimate (`-remove_noise`) has settled on the room
    /// when the utterance begins rather than during its first words. Measured, it did not help (docs/speech.md,
    /// "Endpointed utterances in noise"); nothing passes it by default.
    public func decodeWhole(_ input: [Int16], background: [Int16] = []) throws -> Transcript {
        guard options.cepstralMean == .batch else { throw SpeechRecognitionError.wholeUtteranceNeedsBatchMean }
        let clock = DecodeClock()
        let signalToNoise = SignalToNoise.estimate(input)
        let lacksFloor = MicrophoneFloor.lacksNoiseFloor(input)
        let (decoder, phoneDecoder) = decoders(for: signalToNoise, noiseFloor: !lacksFloor)
        var audio = input
        var leadingPadding = 0
        if lacksFloor {
            var floor = MicrophoneFloor()
            audio = floor.quiet() + floor.adding(to: input) + floor.quiet()
            leadingPadding = MicrophoneFloor.padding
        }
        // The phone loop on its own decoder and thread, while this one decodes the grammar: the same result as
        // running it after, in about the time of the longer pass (docs/speech.md, "The phone loop alongside").
        let alongside = phoneDecoder.map {
            PhoneLoopPass(decoder: $0, audio: audio, background: background)
        }
        alongside?.start()
        // The judge against any English decodes every utterance the usual decoder takes (clean speech) on a third
        // thread, from the start: waiting for the grammar's margin first would put its whole decoding after the
        // grammar's, past the endpointer's budget for a long order (docs/speech.md, "Any English as the reference").
        let englishPass = decoder === self.decoder ? english?.start(audio, background: background) : nil
        // The second reading, likewise on a thread of its own from the start (`SecondReading`): clean speech and speech
        // in moderate noise, not noisy speech.
        let readingHere = decoder === self.decoder ? readingDecoder : decoder === moderateDecoder ? moderateReadingDecoder : nil
        let readingPass = readingHere.map { SecondReadingPass(decoder: $0, audio: audio, background: background) }
        readingPass?.start()
        let grammar = Result { () throws -> Void in try decoder.decodeUtterance(audio, background: background) }
        // Whichever pass ends first finds which frames the phone pass kept, on its own front end (same settings).
        let phoneFramesHere = alongside?.claimReplay() == true
            ? PhoneLoopPass.keptFrames(on: decoder, audio: audio, background: background) : nil
        let phones = alongside?.wait()
        // The second reading is waited for before anything here can throw: its decoder is this recogniser's, and the
        // next utterance must not find it still decoding on another thread. Its wall time is in `clock`'s from here.
        let read = readingPass?.wait()
        try grammar.get()
        let earlier = (wall: 0.0, cpu: (phones?.cpuSeconds ?? 0) + (read?.cpuSeconds ?? 0))
        let keptFrames = phones.flatMap { pass in (phoneFramesHere ?? pass.phoneFrames).map { (pass.grammarFrames, $0) } }
        var result = try transcript(from: decoder, audio: audio, background: background, inputSamples: input.count,
                                    leadingPadding: leadingPadding, signalToNoise: signalToNoise, clock: clock, earlier: earlier,
                                    phones: try phones?.segments.get(), keptFrames: keptFrames)
        if let englishPass { try judgeAgainstEnglish(&result, grammar: decoder, pass: englishPass) }
        if decoder === self.decoder, options.search == .grammar {
            result.valuesMarginPoint = options.valuesMarginPoint
            result.valuesMinimumSeconds = options.valuesMinimumSeconds
        }
        if let read {
            let reading = try read.read.get()
            result.secondReading = reading.words
            if let score = reading.score, !result.text.isEmpty, let grammarScore = Self.pathScore(of: decoder, lattice: false) {
                result.secondReadingMargin = grammarScore - score
            }
            if let readingModel, !reading.words.isEmpty {
                result.secondReadingFluency = readingModel.log10ProbabilityPerWord(reading.words.split(separator: " ").map(String.init))
            }
            // The reading may answer (clean speech and moderate noise, the decoders that have one), through the calibration
            // of the decoder that read it, and only when both margins were measured: its own against the phone loop is the
            // grammar's minus the difference of the two paths.
            if options.secondReading == .decide, let margin = result.acousticMargin, let between = result.secondReadingMargin {
                result.secondReadingConfidence = calibration(of: decoder).confidence(margin: margin - between)
            }
        }
        return result
    }

    /// `options.anyEnglish`: when the usual decoder's margin passed the acoustic point (confidence 0.5, its
    /// calibration's midpoint and `SpeechUnderstanding.defaultAcousticThreshold`) but lies below the judge's
    /// `judgedBelow`, lowers the confidence to the judge's if the words of any English (`pass`, the general decoding
    /// of the same audio) fit it much better than the grammar's.
    /// Both paths are scored on the same audio by the same front end, so the phone loop, the reference of both
    /// margins, cancels: the margin against any English is the difference of the two paths' acoustic scores per frame
    /// (docs/speech.md, "Any English as the reference"). The pass is always waited for, so that the transcript counts
    /// its processor time and no decoding outlives the call.
    private func judgeAgainstEnglish(_ transcript: inout Transcript, grammar: PocketSphinxDecoder, pass: BackgroundWork<Double?>) throws {
        let clock = DecodeClock()
        let finished = pass.wait()
        transcript.decodeMilliseconds += clock.elapsed().wall * 1000
        transcript.decodeCPUMilliseconds += finished.cpuSeconds * 1000
        guard let judge = options.anyEnglish, let margin = transcript.acousticMargin,
              transcript.acousticConfidence >= SpeechUnderstanding.defaultAcousticThreshold, margin < judge.judgedBelow ?? .infinity else { return }
        // No path through any English (nothing decoded): the judge abstains.
        guard let englishScore = try finished.result.get() else { return }
        guard let grammarScore = Self.pathScore(of: grammar, lattice: false) else { return }
        let against = grammarScore - englishScore
        transcript.englishMargin = against
        transcript.marginConfidence = transcript.acousticConfidence
        transcript.acousticConfidence = min(transcript.acousticConfidence, judge.confidence.confidence(margin: against))
    }

    /// How `decoder`'s margins become confidences: the noisy-speech, moderate-noise or usual calibration.
    private func calibration(of decoder: PocketSphinxDecoder) -> AcousticConfidence {
        decoder === noisyDecoder ? noisyConfidence : decoder === moderateDecoder ? moderateConfidence : options.confidence
    }

    /// The transcript of the utterance `decoder` has just ended: words with their times, and the confidence pass.
    private func transcript(
        from decoder: PocketSphinxDecoder, audio: [Int16], background: [Int16] = [], inputSamples: Int, leadingPadding: Int,
        signalToNoise: Double?, clock: DecodeClock, earlier: (wall: Double, cpu: Double),
        phones measured: [PocketSphinxDecoder.Segment]? = nil, keptFrames: (grammar: [Int]?, phones: [Int])? = nil
    ) throws -> Transcript {
        let hypothesis = decoder.hypothesis()
        // An n-gram search's lattice scores are brought to the grammar and phone-loop searches' units before the
        // margin compares them with the phone loop (`PocketSphinxDecoder.latticeSegments`).
        let segments = options.search == .grammar ? decoder.segments() : decoder.latticeSegments()
        let frames = decoder.frameCount
        var margin: Double?
        var phones: [PocketSphinxDecoder.Segment] = []
        // The path went through the branch for other speech: no sentence of the workspace fits, nothing to measure.
        let otherSpeech = segments.contains { OtherSpeech.isBranchWord($0.word) }
        if options.measuresConfidence, !otherSpeech, let hypothesis, !hypothesis.text.isEmpty, frames > 0 {
            phones = try measured ?? phoneLoop(decoder, audio: audio)
            margin = Self.margin(of: segments, reference: phones.reduce(0) { $0 + Double($1.acousticScore) }, frames: frames, decoder: decoder)
        }
        // The search numbers only the frames the voice-activity detector kept (PocketSphinxDecoder.inputFrames);
        // fed in blocks, PocketSphinx also adds the stream frame where it last detected speech to every segment,
        // which the first segment (it starts the path, at the search's frame 0) shows.
        let origin = segments.first?.startFrame ?? 0
        // (Alongside, PhoneLoopPass's warm-up found the grammar pass's, and whichever pass ended first the phone's.)
        let source = segments.isEmpty ? [] : keptFrames?.grammar ?? decoder.inputFrames(of: audio, background: background)
        // The phone loop's pass kept frames by its own detector: after the grammar pass over the same audio (the
        // serial pass, or PhoneLoopPass's warm-up), or alongside it from a new stream when streaming.
        let phoneSource = phones.isEmpty ? []
            : options.cepstralMean.isStreaming ? source
            : keptFrames?.phones ?? PhoneLoopPass.keptFrames(on: decoder, audio: audio, background: background)
        let phoneFrames = Self.phoneScoresByInputFrame(phones, source: phoneSource)
        var speechScore = 0.0
        var speechFrames = 0
        var spoken: (first: Int, last: Int)?
        let spent = clock.elapsed()

        let words = segments.compactMap { segment -> Transcript.Word? in
            guard let word = Self.spokenWord(segment.word) else { return nil }
            // The word's first and last frame of the input.
            let first = Self.inputFrame(segment.startFrame - origin, source: source)
            let last = Self.inputFrame(segment.endFrame - origin, source: source)
            spoken = (min(spoken?.first ?? first, first), max(spoken?.last ?? last, last))
            let wordMargin = phones.isEmpty ? nil
                : Self.margin(ofWord: segment, inputFrames: (first, last), against: phoneFrames, decoder: decoder)
            if let wordMargin {
                let frames = segment.endFrame - segment.startFrame + 1
                speechScore += wordMargin * Double(frames)
                speechFrames += frames
            }

            // Frames are 10 ms; times count from the start of the input, not of the added quiet, and end with
            // it: a word that ends on the input's last sample ran on into the quiet appended after it (an
            // eSpeak clip of 0.80 s had "light" end at 0.85 s).
            let offset = Double(leadingPadding) / Double(PCMFormat.speech.sampleRate)
            let length = Double(inputSamples) / Double(PCMFormat.speech.sampleRate)
            return Transcript.Word(text: word, start: min(length, max(0, Double(first) / 100 - offset)),
                                   end: min(length, max(0, Double(last + 1) / 100 - offset)), margin: wordMargin)
        }
        let text = Self.spokenText(hypothesis?.text)
        let noisy = decoder === noisyDecoder
        let calibration = calibration(of: decoder)
        let speechMargin = speechFrames > 0 ? speechScore / Double(speechFrames) : nil
        var nearMargin: Double?
        if margin != nil, let spoken, !phones.isEmpty {
            let reach = Int(((options.marginRoom ?? 0.3) * 100).rounded())
            nearMargin = Self.margin(of: segments, origin: origin, source: source, within: (spoken.first - reach, spoken.last + reach),
                                     against: phoneFrames, decoder: decoder)
            if options.marginRoom != nil, let nearMargin { margin = nearMargin }
        }
        var confidence: Double =
            if text.isEmpty { 0 }
            else if let margin { calibration.confidence(margin: margin) }
            else { options.measuresConfidence ? 0 : 1 }
        // With the noisy-speech means the words' margin judges too: the lower confidence stands.
        if noisy, let words = noisyWordsConfidence, let speechMargin { confidence = min(confidence, words.confidence(margin: speechMargin)) }
        var transcript = Transcript(
            text: text, words: words, acousticConfidence: confidence, acousticMargin: margin,
            signalToNoise: signalToNoise, noisyDecoding: noisy, moderateDecoding: decoder === moderateDecoder,
            audioSeconds: Double(inputSamples) / Double(PCMFormat.speech.sampleRate),
            decodeMilliseconds: (earlier.wall + spent.wall) * 1000, decodeCPUMilliseconds: (earlier.cpu + spent.cpu) * 1000)
        transcript.speechMargin = speechMargin
        transcript.otherSpeech = otherSpeech
        let loopFrames = segments.filter { OtherValue.isLoopWord($0.word) }.reduce(0) { $0 + $1.endFrame - $1.startFrame + 1 }
        transcript.otherValueSeconds = Double(loopFrames) / 100
        transcript.nearMargin = nearMargin
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
        return Self.spokenText((options.cepstralMean.isStreaming ? streamingPair?.words : decoder)?.hypothesis()?.text)
    }

    /// `fsg` with a transition for each other pronunciation of a word (`word(2)`, `word(3)`, as the dictionary numbers
    /// them) beside each of the word's own, as PocketSphinx's `fsg_model_add_alt` would add them when loading the
    /// grammar: the words in the order the file first names them, each word's variants in turn, after every
    /// transition of the file, so that each pair of states lists its transitions in the order PocketSphinx's own
    /// pass leaves them (it puts each new one first; so does its reader).
    static func addingAlternatePronunciations(to fsg: String, counts: [String: Int]) -> String {
        var order: [String] = []
        var transitions: [String: [Substring]] = [:]
        var lines = fsg.split(separator: "\n", omittingEmptySubsequences: false)
        for line in lines where line.hasPrefix("TRANSITION ") {
            let fields = line.split(separator: " ")
            guard fields.count == 5 else { continue }
            let word = String(fields[4])
            if transitions[word] == nil { order.append(word) }
            transitions[word, default: []].append(fields[0..<4].joined(separator: " ")[...])
        }
        var added: [Substring] = []
        for word in order {
            guard let count = counts[word], count > 1, let own = transitions[word] else { continue }
            for variant in 2...count {
                for transition in own { added.append("\(transition) \(word)(\(variant))") }
            }
        }
        guard !added.isEmpty, let end = lines.lastIndex(where: { $0.hasPrefix("FSG_END") }) else { return fsg }
        lines.insert(contentsOf: added, at: end)
        return lines.joined(separator: "\n")
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

    /// The best path's acoustic score per frame as a natural log (`margin` against nothing), from its segments or, for
    /// an n-gram search, its lattice (`PocketSphinxDecoder.latticeSegments`, brought to the same units); nil when the
    /// decoder found no path. What the judge against any English and the second reading compare with the grammar's.
    static func pathScore(of decoder: PocketSphinxDecoder, lattice: Bool) -> Double? {
        let segments = lattice ? decoder.latticeSegments() : decoder.segments()
        let frames = decoder.frameCount
        guard !segments.isEmpty, frames > 0 else { return nil }
        return margin(of: segments, reference: 0, frames: frames, decoder: decoder)
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

    /// The phone loop's acoustic score on each frame of the input (its phones' scores spread evenly over their
    /// frames), `nil` on the frames its pass did not keep; `source` maps its frames to the input's
    /// (PocketSphinxDecoder.inputFrames), the first phone starting the pass at its frame 0.
    static func phoneScoresByInputFrame(_ phones: [PocketSphinxDecoder.Segment], source: [Int]) -> [Double?] {
        guard let first = phones.first else { return [] }
        let origin = first.startFrame
        let last = phones.map(\.endFrame).max() ?? origin
        var scores = [Double?](repeating: nil, count: inputFrame(last - origin, source: source) + 1)
        for phone in phones where phone.endFrame >= phone.startFrame {
            let share = Double(phone.acousticScore) / Double(phone.endFrame - phone.startFrame + 1)
            for frame in phone.startFrame...phone.endFrame {
                let input = inputFrame(frame - origin, source: source)
                if input >= 0, input < scores.count { scores[input] = share }
            }
        }
        return scores
    }

    /// One word's margin against the phone loop over the same stretch of input (`inputFrames`, first and last):
    /// the word's grammar score per frame minus the phone loop's per frame on the input frames of that stretch its
    /// pass kept. The two passes' voice-activity detectors can keep different frames, so frame numbers alone do
    /// not line the passes up. `nil` when the phone pass kept none of the stretch.
    static func margin(
        ofWord word: PocketSphinxDecoder.Segment, inputFrames: (first: Int, last: Int), against phones: [Double?],
        decoder: PocketSphinxDecoder
    ) -> Double? {
        guard let reference = phoneReference(phones, from: inputFrames.first, to: inputFrames.last) else { return nil }
        let frames = Double(word.endFrame - word.startFrame + 1)
        return (Double(word.acousticScore) / frames - reference) * decoder.naturalLog(1) * 1024
            - insertionBonus(of: [word], decoder: decoder) / frames
    }

    /// The phone loop's mean score per frame over the input frames `from...to` its pass kept
    /// (`phoneScoresByInputFrame`); `nil` when it kept none of them.
    static func phoneReference(_ phones: [Double?], from: Int, to: Int) -> Double? {
        let first = max(0, from), last = min(phones.count - 1, to)
        guard first <= last else { return nil }
        var sum = 0.0
        var kept = 0
        for frame in first...last {
            if let score = phones[frame] {
                sum += score
                kept += 1
            }
        }
        return kept > 0 ? sum / Double(kept) : nil
    }

    /// The utterance's margin over the input frames `within` (first and last) only: the grammar path's segments
    /// counted by the share of their frames inside, against the phone loop's score on the frames inside its pass
    /// kept, each per frame. `nil` when the stretch leaves out none of the grammar pass's frames (the whole
    /// utterance's margin stands) or either pass kept none of it.
    static func margin(
        of segments: [PocketSphinxDecoder.Segment], origin: Int, source: [Int], within: (first: Int, last: Int),
        against phones: [Double?], decoder: PocketSphinxDecoder
    ) -> Double? {
        var grammar = 0.0, bonus = 0.0
        var inside = 0, outside = 0
        for segment in segments where segment.endFrame >= segment.startFrame {
            var count = 0
            for frame in segment.startFrame...segment.endFrame {
                let input = inputFrame(frame - origin, source: source)
                if input >= within.first, input <= within.last { count += 1 }
            }
            let share = Double(count) / Double(segment.endFrame - segment.startFrame + 1)
            grammar += Double(segment.acousticScore) * share
            bonus += insertionBonus(of: [segment], decoder: decoder) * share
            inside += count
            outside += segment.endFrame - segment.startFrame + 1 - count
        }
        guard outside > 0, inside > 0, let reference = phoneReference(phones, from: within.first, to: within.last) else { return nil }
        return (grammar / Double(inside) - reference) * decoder.naturalLog(1) * 1024 - bonus / Double(inside)
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

    /// The frame of the input that search frame `frame` (counted from the utterance's first) was made from, given
    /// `source` (PocketSphinxDecoder.inputFrames). Frames past its end (the quiet a live utterance ends with is
    /// not in the audio it keeps) follow the last one on; without it, frames are taken as they are.
    static func inputFrame(_ frame: Int, source: [Int]) -> Int {
        guard let last = source.last else { return frame }
        if frame < 0 { return source[0] + frame }
        return frame < source.count ? source[frame] : last + frame - (source.count - 1)
    }

    /// A dictionary word as text: fillers and sentence markers dropped, variant numbers removed
    /// ("what's(2)" → "what's").
    static func spokenWord(_ word: String) -> String? {
        if word.isEmpty || word.hasPrefix("<") || word.hasPrefix("[") || word.hasPrefix("++") || word == "(NULL)" { return nil }
        if word.hasSuffix(")"), let paren = word.lastIndex(of: "(") { return String(word[..<paren]) }
        return word
    }

    /// A decoder's hypothesis as text: its spoken words (`spokenWord`) joined by spaces; empty without one.
    static func spokenText(_ hypothesis: String?) -> String {
        (hypothesis ?? "").split(separator: " ").compactMap { spokenWord(String($0)) }.joined(separator: " ")
    }
}

/// The phone-loop pass of a whole utterance on its own decoder and thread. It reproduces the pass that would run
/// after the grammar pass on the same decoder: that pass starts an utterance without restarting the stream, so its
/// front end's noise estimate is the one left by the grammar pass over the same audio; here the front end first runs
/// over the audio alone (no search) to leave the same estimate. @unchecked Sendable: the decoder is used only by the
/// pass's thread between `start()` and `wait()`, and the results are written before it ends (`BackgroundWork`).
final class PhoneLoopPass: @unchecked Sendable {
    let decoder: PocketSphinxDecoder
    let audio: [Int16]
    /// Audio before the utterance that the grammar pass's front end ran over first (`decodeWhole`).
    let background: [Int16]
    private(set) var segments: Result<[PocketSphinxDecoder.Segment], any Error> = .success([])
    /// Where the grammar pass's frames came from (PocketSphinxDecoder.inputFrames), found by the warm-up; nil with a
    /// background (found after that pass instead).
    private(set) var grammarFrames: [Int]?
    /// Where this pass's frames came from, when this thread ended first (`claimReplay`).
    private(set) var phoneFrames: [Int]?
    private let claim = NSLock()
    private var replayClaimed = false
    /// Processor seconds the pass took on its thread (after `wait()`).
    private(set) var cpuSeconds = 0.0
    private var work: BackgroundWork<Void>?

    init(decoder: PocketSphinxDecoder, audio: [Int16], background: [Int16] = []) {
        self.decoder = decoder
        self.audio = audio
        self.background = background
    }

    func start() {
        work = BackgroundWork { [self] in
            segments = Result {
                if background.isEmpty {
                    // The warm-up: the front end over the audio from a new stream, as the grammar pass runs it, so
                    // what it kept is the grammar pass's too.
                    grammarFrames = decoder.inputFrames(of: audio)
                } else {
                    _ = decoder.frontEndMean(of: background)
                    _ = decoder.frontEndMean(of: audio, newStream: false)
                }
                try decoder.startUtterance()
                try decoder.process(audio, fullUtterance: true)
                try decoder.endUtterance()
                return decoder.segments()
            }
            if claimReplay() { phoneFrames = Self.keptFrames(on: decoder, audio: audio, background: background) }
        }
    }

    /// Which frames a phone-loop pass over `audio` kept (PocketSphinxDecoder.inputFrames), found on `decoder`'s
    /// front end (either decoder of the pair: their front ends have the same settings). The pass runs after the
    /// front end has been over the audio once (the grammar pass, or this pass's warm-up), so the replay starts there.
    static func keptFrames(on decoder: PocketSphinxDecoder, audio: [Int16], background: [Int16]) -> [Int] {
        decoder.inputFrames(of: audio, background: background, earlier: [audio])
    }

    /// True for the first caller only: finding which frames this pass kept is another run of the front end over the
    /// audio, done by whichever of the two passes ends first (this thread, or the grammar pass's on its decoder).
    func claimReplay() -> Bool {
        claim.lock()
        defer { claim.unlock() }
        if replayClaimed { return false }
        replayClaimed = true
        return true
    }

    /// Blocks until the pass is done.
    func wait() -> PhoneLoopPass {
        if let finished = work?.wait() { cpuSeconds = finished.cpuSeconds }
        work = nil
        return self
    }
}
