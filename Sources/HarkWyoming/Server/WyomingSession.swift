import Foundation
import HarkAppliance
import HarkAudio
import HarkCore
import HarkSpeech

/// One client's conversation with the server: answers each event in order, keeping what a stream needs
/// between events (the audio of a transcription, a wake spotter, a streaming synthesis, the dialog's
/// context). Every bad request is an `error` event naming the event and field; none ends the session.
///
/// Not Sendable: it holds decoders; its connection's thread is the only one that calls it.
public final class WyomingSession {
    let services: WyomingServices
    let limits: WyomingLimits
    private let sendEvent: @Sendable (WyomingEvent) throws(WyomingClientGone) -> Void

    /// What the next audio stream is for.
    enum Purpose {
        case transcribe(language: String, context: JSONValue?)
        case detect(context: JSONValue?)
    }
    private var purpose: Purpose?
    private var transcription: Transcription?
    private var listening: WakeListening?
    /// An audio stream that failed (too long, no free spotter): its remaining chunks are dropped quietly.
    private var droppingStream = false
    /// Chunks without a start are reported once per run of them, not once per chunk.
    private var reportedChunkWithoutStart = false
    private var synthesis: StreamingSynthesis?
    /// The dialog's context after this connection's last handled transcript, for a client that does not
    /// send it back.
    private var dialogContext = JSONObject()

    /// The audio of one `transcribe` request as it arrives, converted to 16 kHz mono.
    final class Transcription {
        let converter: AudioStreamConverter
        let language: String
        let context: JSONValue?
        var audio: [Int16] = []
        var samplesSincePartial = 0
        let partials = PartialTranscripts()
        init(converter: AudioStreamConverter, language: String, context: JSONValue?) {
            self.converter = converter
            self.language = language
            self.context = context
        }
    }

    /// One `detect` stream: a spotter lent for as long as the stream lasts.
    final class WakeListening {
        let converter: AudioStreamConverter
        let spotter: WakePhraseSpotter
        let context: JSONValue?
        /// The stream's time at its first sample, in milliseconds: audio-start's `timestamp`, else the first
        /// chunk's (HA sends none at audio-start and times its chunks from its pipeline's start, and reads the
        /// detection's `timestamp` on that clock), else 0. Detections are timed from it.
        var startTimestamp: Int?
        var detected = false
        init(converter: AudioStreamConverter, spotter: WakePhraseSpotter, context: JSONValue?, startTimestamp: Int?) {
            self.converter = converter
            self.spotter = spotter
            self.context = context
            self.startTimestamp = startTimestamp
        }
    }

    /// Text arriving in `synthesize-chunk`s, spoken a sentence at a time.
    struct StreamingSynthesis {
        var synthesizer: SpeechSynthesizer
        var pending = ""
    }

    /// A partial transcript is decoded every second of audio at most (the whole utterance so far, batch CMN).
    static let partialEvery = 16_000

    /// True when more of the client's bytes are already waiting to be read: the session is behind the client
    /// (audio sent faster than real time) and skips optional work. The server sets it per connection.
    public var inputWaiting: () -> Bool = { false }

    /// `send` writes one event to the client; it is called from the session's thread and, for partial
    /// transcripts, from a worker thread, so it must serialise its writes.
    public init(services: WyomingServices, limits: WyomingLimits, send: @escaping @Sendable (WyomingEvent) throws(WyomingClientGone) -> Void) {
        self.services = services
        self.limits = limits
        sendEvent = send
    }

    deinit { close() }

    /// Gives back what the session borrowed (a wake spotter): the client is gone or the server stops.
    public func close() {
        if let listening { services.wake?.spotters.release(listening.spotter) }
        listening = nil
        transcription = nil
        synthesis = nil
    }

    private func send(_ event: WyomingEvent) throws(WyomingClientGone) {
        try sendEvent(event)
    }

    /// Answers one event. Throws only when the client is gone.
    public func handle(_ event: WyomingEvent) throws(WyomingClientGone) {
        do {
            try dispatch(event)
        } catch let error as WyomingRequestError {
            try send(.error(error.text, code: error.code))
        } catch let error as WyomingClientGone {
            throw error
        } catch {
            try send(.error("\(event.type): \(error)", code: "failed"))
        }
    }

    /// Every event type this server answers, for the unknown-event error.
    static let handledTypes = [
        "describe", "ping", "select-program", "transcribe", "audio-start", "audio-chunk", "audio-stop", "detect",
        "synthesize", "synthesize-start", "synthesize-chunk", "synthesize-stop", "recognize", "transcript",
    ]

    private func dispatch(_ event: WyomingEvent) throws {
        switch event.type {
        case "describe": try send(services.info)
        case "ping": try send(WyomingEvent("pong", ["text": event.data["text"] ?? .null]))
        case "select-program": try selectProgram(event)
        case "transcribe": try transcribe(event)
        case "detect": try detect(event)
        case "audio-start": try audioStart(event)
        case "audio-chunk": try audioChunk(event)
        case "audio-stop": try audioStop(event)
        case "synthesize": try synthesize(event)
        case "synthesize-start": try synthesizeStart(event)
        case "synthesize-chunk": try synthesizeChunk(event)
        case "synthesize-stop": try synthesizeStop()
        case "recognize": try recognize(event)
        // HA's conversation agent sends a transcript whether the server offers handle or only intent.
        case "transcript": try services.handle == nil && services.intent != nil ? recognize(event) : handleTranscript(event)
        default:
            throw WyomingRequestError(
                text: "unknown event type \"\(event.type)\"; this server answers \(Self.handledTypes.joined(separator: ", "))",
                code: "unknown-event")
        }
    }

    // MARK: - Fields

    private func service<T>(_ value: T?, _ name: String, for type: String) throws -> T {
        guard let value else {
            let offered = services.offered
            throw WyomingRequestError(
                text: "\(type): this server does not offer \(name) (it offers \(offered.isEmpty ? "nothing" : offered.joined(separator: ", ")))",
                code: "service-unavailable")
        }
        return value
    }

    private func string(_ event: WyomingEvent, _ field: String, required: Bool) throws -> String? {
        guard let value = event.data[field], !value.isNull else {
            if required { throw WyomingRequestError(text: "\(event.type).data.\(field): missing (expected a string)", code: "bad-request") }
            return nil
        }
        guard let text = value.stringValue else {
            throw WyomingRequestError(text: "\(event.type).data.\(field): expected a string, got \(WyomingFrameReader.describe(value))", code: "bad-request")
        }
        return text
    }

    private func integer(_ event: WyomingEvent, _ field: String, in range: ClosedRange<Int>) throws -> Int {
        guard let value = event.data[field], !value.isNull else {
            throw WyomingRequestError(text: "\(event.type).data.\(field): missing (expected a whole number \(range.lowerBound)…\(range.upperBound))", code: "bad-request")
        }
        guard let number = value.doubleValue, number.rounded() == number, number >= Double(range.lowerBound), number <= Double(range.upperBound) else {
            throw WyomingRequestError(
                text: "\(event.type).data.\(field): expected a whole number \(range.lowerBound)…\(range.upperBound), got \(WyomingFrameReader.describe(value))",
                code: "bad-request")
        }
        return Int(number)
    }

    private func context(_ event: WyomingEvent) throws -> JSONValue? {
        guard let value = event.data["context"], !value.isNull else { return nil }
        guard value.objectValue != nil else {
            throw WyomingRequestError(text: "\(event.type).data.context: expected an object, got \(WyomingFrameReader.describe(value))", code: "bad-request")
        }
        return value
    }

    private func audioFormat(_ event: WyomingEvent) throws -> WyomingAudioFormat {
        WyomingAudioFormat(
            rate: try integer(event, "rate", in: WyomingAudioFormat.rates),
            width: try integer(event, "width", in: WyomingAudioFormat.widths),
            channels: try integer(event, "channels", in: WyomingAudioFormat.channelCounts))
    }

    // MARK: - Info

    private func selectProgram(_ event: WyomingEvent) throws {
        let name = try string(event, "name", required: true) ?? ""
        let programs = (services.info.data.pairs.flatMap { $0.value.arrayValue ?? [] }).compactMap { $0["name"]?.stringValue }
        guard programs.contains(name) else {
            throw WyomingRequestError(text: "select-program.data.name: no program \"\(name)\" (this server has \(programs.joined(separator: ", ")))", code: "bad-request")
        }
    }

    // MARK: - Audio streams: transcription and the wake phrase

    private func transcribe(_ event: WyomingEvent) throws {
        _ = try service(services.asr, "asr", for: "transcribe")
        let language = try string(event, "language", required: false) ?? "en"
        guard language.lowercased() == "en" || language.lowercased().hasPrefix("en-") || language.lowercased().hasPrefix("en_") else {
            throw WyomingRequestError(text: "transcribe.data.language: \"\(language)\" is not served (the model is English: en)", code: "unsupported-language")
        }
        if let name = try string(event, "name", required: false), let asr = services.asr, name != asr.model, name != "hark-asr" {
            throw WyomingRequestError(text: "transcribe.data.name: no model \"\(name)\" (this server has \"\(asr.model)\")", code: "bad-request")
        }
        purpose = .transcribe(language: language, context: try context(event))
    }

    private func detect(_ event: WyomingEvent) throws {
        let wake = try service(services.wake, "wake", for: "detect")
        if let value = event.data["names"], !value.isNull {
            guard let names = value.arrayValue?.compactMap(\.stringValue), names.count == value.arrayValue?.count else {
                throw WyomingRequestError(text: "detect.data.names: expected a list of strings, got \(WyomingFrameReader.describe(value))", code: "bad-request")
            }
            let normalised = names.map { $0.lowercased().replacingOccurrences(of: "_", with: " ") }
            guard names.isEmpty || normalised.contains(wake.phrase) else {
                throw WyomingRequestError(
                    text: "detect.data.names: no wake model \(names.map { "\"\($0)\"" }.joined(separator: ", ")) (this server has \"\(wake.model)\", phrase \"\(wake.phrase)\")",
                    code: "unknown-wake-word")
            }
        }
        purpose = .detect(context: try context(event))
    }

    private func endStream() {
        if let listening { services.wake?.spotters.release(listening.spotter) }
        listening = nil
        transcription = nil
        droppingStream = false
    }

    private func audioStart(_ event: WyomingEvent) throws {
        endStream()
        reportedChunkWithoutStart = false
        let format = try audioFormat(event)
        let converter: AudioStreamConverter
        do { converter = try AudioStreamConverter(format: format) } catch {
            throw WyomingRequestError(text: "audio-start: cannot convert \(format) to 16 kHz mono: \(error)", code: "bad-audio")
        }
        switch purpose ?? .transcribe(language: "en", context: nil) {
        case .transcribe(let language, let context):
            _ = try service(services.asr, "asr", for: "audio-start")
            transcription = Transcription(converter: converter, language: language, context: context)
            var start = JSONObject()
            start["language"] = .string(language)
            if let context { start["context"] = context }
            try send(WyomingEvent("transcript-start", start))
        case .detect(let context):
            let wake = try service(services.wake, "wake", for: "audio-start")
            guard let spotter = try wake.spotters.borrow(waitingUpTo: 0) else {
                droppingStream = true
                throw WyomingRequestError(
                    text: "busy: all \(wake.spotters.capacity) wake-phrase spotters are listening to other streams; try again later", code: "busy")
            }
            do { try spotter.reset() } catch {
                wake.spotters.release(spotter)
                throw WyomingRequestError(text: "wake: \(error)", code: "wake-failed")
            }
            listening = WakeListening(converter: converter, spotter: spotter, context: context, startTimestamp: Self.timestamp(event))
        }
    }

    private func audioChunk(_ event: WyomingEvent) throws {
        if droppingStream { return }
        guard transcription != nil || listening != nil else {
            if reportedChunkWithoutStart { return }
            reportedChunkWithoutStart = true
            throw WyomingRequestError(
                text: "audio-chunk before audio-start: send audio-start {rate, width, channels} first (further chunks without a start are dropped)",
                code: "no-audio-start")
        }
        let format = transcription?.converter.format ?? listening!.converter.format
        // Chunks repeat the stream's format; one that differs cannot be part of this stream.
        if event.data["rate"] != nil || event.data["width"] != nil || event.data["channels"] != nil {
            let chunkFormat = try audioFormat(event)
            guard chunkFormat == format else {
                throw WyomingRequestError(text: "audio-chunk: \(chunkFormat) differs from audio-start's \(format)", code: "bad-audio")
            }
        }
        if let transcription {
            let audio = try convert(event.payload, transcription.converter)
            let limit = Int(limits.transcribeSeconds * Double(PCMFormat.speech.sampleRate))
            guard transcription.audio.count + audio.samples.count <= limit else {
                self.transcription = nil
                droppingStream = true
                throw WyomingRequestError(
                    text: "audio-chunk: more than \(Int(limits.transcribeSeconds)) s of audio in one transcription; the rest of this stream is dropped",
                    code: "audio-too-long")
            }
            transcription.audio.append(contentsOf: audio.samples)
            transcription.samplesSincePartial += audio.samples.count
            // A partial decodes the whole utterance so far (0.25 × real time for the barista grammar:
            // docs/speech.md), so it waits for three times its last cost in new audio, and is skipped while the
            // client's audio is already waiting (sent faster than real time, it would only cost CPU).
            let due = max(Self.partialEvery, Int(transcription.partials.lastSeconds * 3 * Double(PCMFormat.speech.sampleRate)))
            if limits.partialTranscripts, transcription.samplesSincePartial >= due, !inputWaiting() {
                transcription.samplesSincePartial = 0
                startPartial(transcription)
            }
        } else if let listening {
            if listening.startTimestamp == nil { listening.startTimestamp = Self.timestamp(event) ?? 0 }
            try listen(listening, to: try convert(event.payload, listening.converter))
        }
    }

    /// An event's `timestamp` in milliseconds. Any number is accepted, but only a plausible one (under 30,000
    /// years) is used.
    static func timestamp(_ event: WyomingEvent) -> Int? {
        event.data["timestamp"]?.doubleValue.flatMap { abs($0) < 1e15 ? Int($0) : nil }
    }

    private func convert(_ payload: [UInt8], _ converter: AudioStreamConverter) throws -> PCMBuffer {
        do { return try converter.convert(payload) } catch {
            throw WyomingRequestError(text: "audio-chunk: resampling failed: \(error)", code: "bad-audio")
        }
    }

    private func listen(_ listening: WakeListening, to audio: PCMBuffer) throws {
        guard !listening.detected, !audio.isEmpty else { return }
        let found: WakeDetection?
        do { found = try listening.spotter.process(audio) } catch {
            throw WyomingRequestError(text: "wake: \(error)", code: "wake-failed")
        }
        guard let found, let wake = services.wake else { return }
        listening.detected = true
        var data: JSONObject = [
            "name": .string(wake.model), "timestamp": .number(Double((listening.startTimestamp ?? 0) + Int((found.time * 1000).rounded()))), "speaker": .null,
        ]
        if let context = listening.context { data["context"] = context }
        try send(WyomingEvent("detection", data))
    }

    /// Decodes the words heard so far on a worker thread, so a partial never holds up the session (an
    /// `audio-stop` arriving meanwhile is decoded at once, on another recogniser), if a recogniser is free
    /// and no finished utterance is waiting for one: partials give way to transcripts.
    private func startPartial(_ transcription: Transcription) {
        guard let asr = services.asr, transcription.partials.claim() else { return }
        guard let recognizer = asr.recognizers.borrowIfUncontended() else {
            transcription.partials.unclaim()
            return
        }
        let job = PartialJob(
            recognizer: recognizer, pool: asr.recognizers, audio: PCMBuffer(format: .speech, samples: transcription.audio),
            partials: transcription.partials, send: sendEvent)
        DispatchQueue.global().async { job.run() }
    }

    private func audioStop(_ event: WyomingEvent) throws {
        defer {
            endStream()
            purpose = nil
        }
        if droppingStream { return }
        if let transcription {
            try finishTranscription(transcription)
        } else if let listening {
            try listen(listening, to: try finishConversion(listening.converter))
            if !listening.detected {
                try send(WyomingEvent("not-detected", listening.context.map { ["context": $0] } ?? JSONObject()))
            }
        } else {
            throw WyomingRequestError(text: "audio-stop without audio-start: there is no stream to end", code: "no-audio-start")
        }
    }

    private func finishConversion(_ converter: AudioStreamConverter) throws -> PCMBuffer {
        do { return try converter.finish() } catch {
            throw WyomingRequestError(text: "audio-stop: resampling failed: \(error)", code: "bad-audio")
        }
    }

    private func finishTranscription(_ transcription: Transcription) throws {
        let asr = try service(services.asr, "asr", for: "audio-stop")
        // No transcript-chunk may follow the transcript.
        transcription.partials.finish()
        transcription.audio.append(contentsOf: try finishConversion(transcription.converter).samples)
        // A chime or a knock is no command: sound the appliance's endpointer would dismiss (no voice, or a pitch that
        // holds) and nothing else gets no transcript, without decoding (docs/speech.md, "An utterance needs a voice").
        if (try? Endpointer.heardOnlyNoise(PCMBuffer(format: .speech, samples: transcription.audio))) == true {
            try sendTranscript("", transcription)
            return
        }
        let borrowed: SpeechRecognizer?
        do { borrowed = try asr.recognizers.borrow(waitingUpTo: limits.decoderWait) } catch {
            throw WyomingRequestError(text: "asr: the recogniser could not be made: \(error)", code: "asr-failed")
        }
        guard let recognizer = borrowed else {
            throw WyomingRequestError(
                text: "busy: all \(asr.recognizers.capacity) recognisers stayed in use for \(Int(limits.decoderWait)) s; try again", code: "busy")
        }
        let transcript: Transcript
        do {
            defer { asr.recognizers.release(recognizer) }
            transcript = try recognizer.recognize(PCMBuffer(format: .speech, samples: transcription.audio))
        } catch {
            throw WyomingRequestError(text: "asr: \(error)", code: "asr-failed")
        }
        // The second reading answers when it is sure of its words and their intent (`SecondReading.Use.decide`).
        if let command = asr.understanding?.understand(transcript), command.decidedByReading {
            try sendTranscript(command.text, transcription)
            return
        }
        // Unsure is better than wrong: audio that fits the grammar's words poorly is no transcript at all, nor a command
        // whose value's place none of the values fits (its words leave the value out: `Transcript.otherValue`).
        let sure = transcript.acousticConfidence >= asr.acousticThreshold && !transcript.otherValue
        try sendTranscript(sure ? transcript.text : "", transcription)
    }

    private func sendTranscript(_ text: String, _ transcription: Transcription) throws {
        var data: JSONObject = ["text": .string(text), "language": .string(transcription.language)]
        if let context = transcription.context { data["context"] = context }
        try send(WyomingEvent("transcript", data))
        try send(WyomingEvent("transcript-stop"))
    }

    // MARK: - Synthesis

    /// The synthesizer for a `voice` object ({name, language, speaker}); the configured one without it.
    private func synthesizer(_ event: WyomingEvent) throws -> SpeechSynthesizer {
        let tts = try service(services.tts, "tts", for: event.type)
        guard let value = event.data["voice"], !value.isNull else { return tts.synthesizer }
        guard let voice = value.objectValue else {
            throw WyomingRequestError(text: "\(event.type).data.voice: expected an object {name, language, speaker}, got \(WyomingFrameReader.describe(value))", code: "bad-request")
        }
        func field(_ name: String) throws -> String? {
            guard let v = voice[name], !v.isNull else { return nil }
            guard let s = v.stringValue else {
                throw WyomingRequestError(text: "\(event.type).data.voice.\(name): expected a string, got \(WyomingFrameReader.describe(v))", code: "bad-request")
            }
            return s
        }
        let known = tts.voices.compactMap(\.languages.first)
        var language = tts.synthesizer.voice.split(separator: "+").first.map(String.init) ?? tts.synthesizer.voice
        var variant = tts.synthesizer.voice.split(separator: "+", maxSplits: 1).dropFirst().first.map(String.init)
        if let name = try field("name") {
            guard let match = tts.voices.first(where: { $0.languages.first?.lowercased() == name.lowercased() || $0.identifier.lowercased() == name.lowercased() }),
                  let first = match.languages.first else {
                throw WyomingRequestError(text: "\(event.type).data.voice.name: no voice \"\(name)\" (\(known.count) voices, e.g. \(known.prefix(8).joined(separator: ", ")))", code: "unknown-voice")
            }
            language = first
            variant = nil
        } else if let wanted = try field("language") {
            let lower = wanted.lowercased().replacingOccurrences(of: "_", with: "-")
            guard let match = tts.voices.first(where: { $0.languages.contains { $0.lowercased() == lower } })
                    ?? tts.voices.first(where: { $0.languages.contains { $0.lowercased().hasPrefix(lower + "-") || lower.hasPrefix($0.lowercased() + "-") } }),
                  let first = match.languages.first else {
                throw WyomingRequestError(text: "\(event.type).data.voice.language: no voice speaks \"\(wanted)\"", code: "unknown-voice")
            }
            language = first
            variant = nil
        }
        if let speaker = try field("speaker") { variant = speaker }
        let name = variant.map { "\(language)+\($0)" } ?? language
        do {
            return try SpeechSynthesizer(voice: name, rate: tts.synthesizer.rate, pitch: tts.synthesizer.pitch, volume: tts.synthesizer.volume)
        } catch {
            throw WyomingRequestError(text: "\(event.type).data.voice: \(error)", code: "unknown-voice")
        }
    }

    private func synthesize(_ event: WyomingEvent) throws {
        // A streaming client also sends the whole text as `synthesize`, for servers that cannot stream: ignored here.
        if synthesis != nil { return }
        let synthesizer = try synthesizer(event)
        let text = try string(event, "text", required: true) ?? ""
        guard text.contains(where: { !$0.isWhitespace }) else {
            throw WyomingRequestError(text: "synthesize.data.text: empty (nothing to say)", code: "bad-request")
        }
        guard text.count <= limits.synthesizeCharacters else {
            throw WyomingRequestError(
                text: "synthesize.data.text: \(text.count) characters is over this server's limit of \(limits.synthesizeCharacters) (stream long text with synthesize-start and synthesize-chunk)",
                code: "text-too-long")
        }
        try speak(text, with: synthesizer)
    }

    /// `audio-start`, the audio in chunks as eSpeak NG produces them, `audio-stop`.
    private func speak(_ text: String, with synthesizer: SpeechSynthesizer) throws {
        let format = synthesizer.outputFormat
        try send(WyomingEvent("audio-start", ["rate": .number(Double(format.sampleRate)), "width": 2, "channels": 1, "timestamp": 0]))
        let sink = EventAudioSink(format: PCMFormat(sampleRate: format.sampleRate, channels: 1), send: sendEvent)
        do {
            try synthesizer.speak(text, to: sink)
        } catch {
            if let gone = sink.gone { throw gone }
            throw WyomingRequestError(text: "tts: \(error)", code: "tts-failed")
        }
        try send(WyomingEvent("audio-stop", ["timestamp": .number(Double(sink.milliseconds))]))
    }

    private func synthesizeStart(_ event: WyomingEvent) throws {
        synthesis = StreamingSynthesis(synthesizer: try synthesizer(event))
    }

    private func synthesizeChunk(_ event: WyomingEvent) throws {
        guard synthesis != nil else {
            throw WyomingRequestError(text: "synthesize-chunk before synthesize-start: start the stream with synthesize-start", code: "no-synthesize-start")
        }
        let text = try string(event, "text", required: true) ?? ""
        synthesis?.pending += text
        while let current = synthesis,
              let (sentence, rest) = Self.firstSentence(current.pending) ?? Self.piece(of: current.pending, limit: limits.sentenceCharacters) {
            synthesis?.pending = rest
            if sentence.contains(where: { !$0.isWhitespace }) { try speak(sentence, with: current.synthesizer) }
        }
    }

    private func synthesizeStop() throws {
        guard let current = synthesis else {
            throw WyomingRequestError(text: "synthesize-stop before synthesize-start: there is no stream to end", code: "no-synthesize-start")
        }
        synthesis = nil
        if current.pending.contains(where: { !$0.isWhitespace }) { try speak(current.pending, with: current.synthesizer) }
        try send(WyomingEvent("synthesize-stopped"))
    }

    /// The first complete sentence of `text` (through `.`, `!`, `?` or a newline followed by white space)
    /// and what follows it; nil while no sentence is complete.
    static func firstSentence(_ text: String) -> (String, String)? {
        var previous: Character?
        for index in text.indices {
            let character = text[index]
            if let p = previous, character.isWhitespace, p == "." || p == "!" || p == "?" || p == "\n" {
                return (String(text[..<index]).trimmingCharacters(in: .whitespacesAndNewlines), String(text[text.index(after: index)...]))
            }
            previous = character
        }
        return nil
    }

    /// For text that runs on past `limit` characters without ending a sentence: the words before the last
    /// space within the limit (or the first `limit` characters, if there is no space), and the rest.
    static func piece(of text: String, limit: Int) -> (String, String)? {
        guard text.count > limit else { return nil }
        let end = text.index(text.startIndex, offsetBy: limit)
        let cut = text[..<end].lastIndex(where: \.isWhitespace) ?? end
        return (String(text[..<cut]), String(text[cut...]))
    }

    // MARK: - Intents and dialog

    private func recognize(_ event: WyomingEvent) throws {
        let intent = try service(services.intent, "intent", for: "recognize")
        let text = try string(event, "text", required: true) ?? ""
        let context = try context(event)
        let understanding = intent.matcher.understand(text)
        guard let top = understanding.intents.first, top.confidence >= intent.threshold else {
            var data: JSONObject = ["text": .string(text)]
            if let context { data["context"] = context }
            try send(WyomingEvent("not-recognized", data))
            return
        }
        var data: JSONObject = ["name": .string(top.intent)]
        if !understanding.entities.isEmpty {
            data["entities"] = .array(understanding.entities.map { ["name": .string($0.entity), "value": .string($0.value)] })
        }
        data["text"] = .string(text)
        if let context { data["context"] = context }
        try send(WyomingEvent("intent", data))
    }

    /// A transcript for the handle service: one dialog turn, its actions run on the devices. The dialog's
    /// context goes back in `context.hark`; a client that sends it back continues that conversation, one that
    /// sends only a `context.conversation_id` (Home Assistant) continues the conversation of that id, and one
    /// that sends neither continues this connection's.
    private func handleTranscript(_ event: WyomingEvent) throws {
        let handle = try service(services.handle, "handle", for: "transcript")
        let text = try string(event, "text", required: true) ?? ""
        let incoming = try context(event)?.objectValue
        var dialog = dialogContext
        let conversation = incoming?["conversation_id"]?.stringValue
        if let conversation { dialog = handle.conversations.context(for: conversation) ?? JSONObject() }
        if let value = incoming?["hark"], !value.isNull {
            guard let object = value.objectValue else {
                throw WyomingRequestError(text: "transcript.data.context.hark: expected the dialog context object from a previous handled event, got \(WyomingFrameReader.describe(value))", code: "bad-request")
            }
            dialog = object
        }
        var context = incoming ?? JSONObject()
        guard text.contains(where: { !$0.isWhitespace }) else {
            context["hark"] = .object(dialog)
            try send(WyomingEvent("not-handled", ["text": "nothing was said", "context": .object(context)]))
            return
        }
        // A new conversation first passes the dialog's welcome (as `hark chat` does), whose reply nobody asked
        // for here: otherwise Watson's conversation_start node would answer the first request instead of it.
        if dialog.isEmpty { dialog = handle.turns.start().context }
        let result = handle.turns.run(text: text, context: dialog, source: .web)
        dialogContext = result.context
        if let conversation { handle.conversations.store(result.context, for: conversation) }
        context["hark"] = .object(result.context)
        if result.reply.isEmpty {
            try send(WyomingEvent("not-handled", ["text": .string("the dialog has no answer to \"\(text)\""), "context": .object(context)]))
        } else {
            try send(WyomingEvent("handled", ["text": .string(result.reply), "context": .object(context)]))
        }
    }
}
