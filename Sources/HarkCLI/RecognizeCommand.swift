import Foundation
import HarkAudio
import HarkCore
import HarkSpeech

/// `hark recognize`: audio files → transcript → intents and entities, accepted or rejected.
enum RecognizeCommand: Command {
    static let name = "recognize"
    static let abstract = "Understand spoken commands in audio files: transcript, intents, entities, accepted"
    static let usage = """
        USAGE: hark recognize [--workspace PATH] [--search grammar|ngram] [--no-confidence] [--phone-loop alongside|after] [--background-seconds S]
                              [--noisy-below DB|off] [--moderate-below DB|off] [--any-english on|off] [--other-speech P|off] [--other-value P|off] [--second-reading decide|check|off] [--values-margin on|off|M] [--courtesy on|off]
                              [--denoise DB] [--margin-room S|all]
                              [--cmn batch|live|stream[:S]] [--decoder-args "NAME VALUE …"] [--noisy-decoder-args "NAME VALUE …"] [--stream [--decoded-tail S] [--unpaced] [--voicing on|off] [--min-voiced S]] [--json]
                              [--model DIR] FILE...

        Decodes each FILE (WAV, FLAC or any libsndfile format, any rate or channels; .raw = 16 kHz s16le
        mono) with a grammar generated from the workspace, then understands the transcript exactly as
        `hark parse` understands typed text. A command is accepted when the audio fits the words (acoustic
        confidence ≥ \(SpeechUnderstanding.defaultAcousticThreshold)) and the words fit an intent (confidence ≥ \(Understanding.reportingThreshold)).
          --workspace PATH  Watson Assistant v1 workspace JSON (default Intents/home.json)
          --search S        grammar (default: only the workspace's sentences) or ngram (a trigram model of them;
                            its acoustic confidence is not calibrated yet, so only the intent confidence decides)
          --no-confidence   skip the phone-loop pass (faster; every transcript then counts as a good fit)
          --background-seconds S
                            the first S seconds of each file are the room before the speech: not decoded, only
                            heard by the front end's noise estimate (an experiment that did not help:
                            docs/speech.md, "Endpointed utterances in noise")
          --phone-loop W    alongside (default: the phone-loop pass runs on its own decoder and thread while the
                            grammar is decoded) or after (on the same decoder, after the grammar pass: the same
                            result, later, and less memory; docs/speech.md, "The phone loop alongside")
          --noisy-below DB  decode utterances whose estimated signal-to-noise ratio is below DB dB with the
                            noisy-speech settings (default 20; off: the same settings for every utterance)
          --moderate-below DB
                            decode the other utterances whose estimate is below DB dB with the moderate-noise means
                            (default 40; off: with the model's own, as clean speech; docs/speech.md, "Moderate noise")
          --any-english W   off (default) or on: clean utterances are also decoded with the general English model,
                            and one the acoustic point accepts with a margin below -1.0 is turned away when any English
                            fits it much better than the grammar (english_margin below -0.5); fewer false accepts for
                            about 100 MiB and two to three times the processor time (docs/speech.md, "Any English as
                            the reference")
          --other-speech P  give the grammar a branch any speech can take, each phone at probability P (0 < P ≤ 1), or
                            off: an utterance that takes it is none of the workspace's sentences and is not decoded
                            (other_speech in --json; docs/speech.md, "Speech outside the grammar")
          --other-value P   off (default) or a probability per phone (0 < P ≤ 1): an experiment, each value's place
                            in the clean-speech grammar may also be free phones; a command that takes them names
                            nothing the workspace knows and is not run (other_value in --json). Real voices' values
                            take it too, so it is off (docs/speech.md, "A value none of the values fits")
          --second-reading W
                            decide (default), check or off: clean utterances and those in moderate noise are also
                            decoded with the workspace's words in any order (a trigram model of its sentences).
                            decide: when that reading is sure of its words (margin against the phone loop, how much
                            they read like the workspace's sentences) and of their intent (0.9), it answers, whether
                            the grammar's sentence meant another intent, named values the reading hears as others, or
                            was turned away; otherwise a command whose two readings mean different intents, or the same
                            one without some of the grammar's values, is not accepted. In moderate noise it only
                            answers in place of a sentence meaning another intent or values it does not hear. check:
                            only the stopping, clean or not. About 1.7 times the processor time of a command
                            (second_reading, second_reading_margin, second_reading_intent, second_reading_fluency,
                            values_unread and decided_by_reading in --json; workspaces of two intents or more;
                            docs/speech.md, "A second reading", "A second reading decides" and "The reading checks
                            the values")
          --courtesy W      on (default) or off: in clean speech the grammar also takes each example with courtesy
                            words around it ("could you", "can you", "would you" or "please" before, "please" after),
                            so a command said politely is heard as itself rather than as the nearest example
                            (workspaces of two intents or more; docs/speech.md, "Courtesy words")
          --values-margin W on (default), off or a margin M: in clean speech the words of a command's values (its
                            entities' words), when they last half a second or more, must fit the sound with a margin of
                            at least M (on: -4.25), so a request that only opens like a command ("I'd like a quiet room"
                            heard as "i'd like a mocha with cream") is turned away (values_margin in --json;
                            docs/speech.md, "Near-commands: the values must fit")
          --margin-room S   judge the utterance by its margin over the words and S seconds either side of them
                            (near_margin) rather than over every frame (all, the default): an experiment that did
                            not help (docs/speech.md, "The noisy-speech rejection point, for endpointed utterances")
          --denoise DB      run libspeexdsp's noise suppressor (up to DB dB of attenuation) over the audio first
          --cmn M           cepstral mean normalisation: batch (default: over the whole utterance, so decoding waits for
                            its end), live (a running mean, so the audio is decoded as it arrives; an experiment for
                            decoding while the speaker talks, docs/speech.md) or stream (decoded as it arrives, with
                            the mean of the first second, stream:S of the first S seconds; less accurate in noise:
                            docs/speech.md, "Streaming with the first seconds' mean")
          --decoder-args A  extra PocketSphinx arguments for both decoders, as name-value pairs in one argument
                            (e.g. "-maxhmmpf 3000 -beam 1e-60"), overriding Hark's: for experiments (docs/speech.md)
          --noisy-decoder-args A
                            the same for the noisy-speech decoder only, overriding its settings (-topn 16 -pip 2)
          --stream          feed each file to the endpointer in 100 ms blocks at real-time pace, as the microphone
                            would (`hark run`'s path), and report its first utterance: the transcript comes when the
                            endpointer hears 0.8 s of silence after the speech, and result_delay_ms says how long
                            after that it was ready, endpoint why it ended (trailing_silence, maximum_length,
                            input_ended)
          --decoded-tail S  with --stream: seconds of audio after the last speech that are decoded with it (default
                            \(UtteranceListener.defaultDecodedTail)); decoding starts once that much silence has followed, while the
                            endpointer waits out the rest. 0.8 or more decodes only at the end
          --unpaced         with --stream: hand the blocks over as fast as they are read (same transcripts;
                            result_delay_ms then also counts decoding that real time would have overlapped)
          --voicing W       with --stream: on (default: once the utterance has been voiced, loud audio without a
                            voice's pitch does not keep it going, so it ends in a kitchen's clatter) or off (the
                            level alone decides, as before 2026-12-06; docs/speech.md, "Voiced speech keeps an
                            utterance going")
          --min-voiced S    with --stream: seconds of voiced audio an utterance needs (default \(Endpointer.Configuration().minimumVoiced));
                            one with less (a knock, a clatter), or whose pitch holds (a chime, a ring tone), is
                            dismissed and the next one taken, and the JSON's "dismissed" counts them; 0 keeps
                            every utterance (docs/speech.md, "An utterance needs a voice")
          --json            one JSON object per file: file, transcript, words (each with start and end in
                            seconds, and its margin), acoustic_confidence, acoustic_margin, speech_margin (over
                            the words alone), near_margin (over the words and 0.3 s either side), english_margin (against any English, when judged), audio_seconds,
                            decode_ms, snr_db, noisy_decoding, intents, entities (as `hark parse --json`), values_margin
                            (over the entities' words, when there are any), accepted
        \(SpeechCLI.modelUsage)
        """

    static func run(_ args: inout Arguments) throws -> Int32 {
        let workspacePath = try args.option("--workspace")
        let search = try args.option("--search", parse: { ["grammar": RecognitionOptions.Search.grammar, "ngram": .languageModel][$0] },
                                     expected: "grammar or ngram") ?? .grammar
        let cmn = try args.option("--cmn", parse: { text -> RecognitionOptions.CepstralMean? in
            switch text {
            case "batch": return .batch
            case "live": return .live
            case "stream": return .defaultStreaming
            default:
                // stream:SECONDS, the stretch whose mean normalises the rest
                guard text.hasPrefix("stream:"), let seconds = Double(text.dropFirst(7)), seconds > 0, seconds <= 30 else { return nil }
                return .streaming(meanSeconds: seconds)
            }
        }, expected: "batch, live, stream or stream:SECONDS (0 < SECONDS <= 30)")
        let json = try args.flag("--json")
        let stream = try args.flag("--stream")
        let decoderArgs = try SpeechCLI.decoderArguments(&args)
        let noisyDecoderArgs = try SpeechCLI.decoderArguments(&args, option: "--noisy-decoder-args")
        let unpaced = try args.flag("--unpaced")
        let voicing = try args.onOff("--voicing")
        let minimumVoiced = try args.option("--min-voiced", parse: { Double($0).flatMap { (0...2).contains($0) ? $0 : nil } },
                                            expected: "seconds, 0…2")
        let decodedTail = try args.option("--decoded-tail", parse: { Double($0).flatMap { (0...10).contains($0) ? $0 : nil } },
                                          expected: "seconds, 0…10")
        let noConfidence = try args.flag("--no-confidence")
        let backgroundSeconds = try args.option("--background-seconds", parse: { Double($0).flatMap { $0 > 0 && $0 <= 30 ? $0 : nil } },
                                                expected: "seconds, more than 0 and at most 30")
        let phoneLoop = try args.option("--phone-loop", parse: { ["alongside": true, "after": false][$0] }, expected: "alongside or after")
        let denoise = try args.option("--denoise", parse: { Int($0).flatMap { (1...60).contains($0) ? $0 : nil } }, expected: "an attenuation in dB, 1…60")
        // --noisy-below and --moderate-below: an SNR bound in dB, or off (.some(nil)); nil when not given.
        func boundOrOff(_ option: String) throws -> Double?? {
            try args.option(option, parse: { text -> Double?? in
                if text == "off" { return .some(nil) }
                return Double(text).flatMap { (0...100).contains($0) ? .some($0) : nil }
            }, expected: "a signal-to-noise ratio in dB, 0…100, or off")
        }
        let noisyBelow = try boundOrOff("--noisy-below")
        let moderateBelow = try boundOrOff("--moderate-below")
        let marginRoom = try args.option("--margin-room", parse: { text -> Double?? in
            if text == "all" { return .some(nil) }
            return Double(text).flatMap { (0...30).contains($0) ? .some($0) : nil }
        }, expected: "seconds, 0…30, or all")
        let anyEnglish = try args.onOff("--any-english")
        func phoneProbabilityOrOff(_ option: String) throws -> Double?? {
            try args.option(option, parse: { text -> Double?? in
                if text == "off" { return .some(nil) }
                return Double(text).flatMap { $0 > 0 && $0 <= 1 ? .some($0) : nil }
            }, expected: "a probability per phone, above 0 and at most 1, or off")
        }
        let otherSpeech = try phoneProbabilityOrOff("--other-speech")
        let otherValue = try phoneProbabilityOrOff("--other-value")
        let secondReading = try args.option("--second-reading", parse: { SecondReading.Use(rawValue: $0) },
                                            expected: "decide, check or off")
        let courtesy = try args.onOff("--courtesy")
        let valuesMargin = try args.option("--values-margin", parse: { text -> Double?? in
            if text == "off" { return .some(nil) }
            if text == "on" { return .some(RecognitionOptions.standardValuesMarginPoint) }
            return Double(text).flatMap { $0.isFinite && $0 <= 0 && $0 >= -50 ? .some($0) : nil }
        }, expected: "on, off or a margin per frame, -50…0")
        let model = try SpeechCLI.model(&args)
        let files = try args.positionals()
        try args.finish()
        guard !files.isEmpty else { throw UsageError(message: "missing FILE") }
        if (decodedTail != nil || unpaced || voicing != nil || minimumVoiced != nil) && !stream {
            throw UsageError(message: "--decoded-tail, --unpaced, --voicing and --min-voiced need --stream")
        }
        if backgroundSeconds != nil && (stream || (cmn ?? .batch) != .batch) {
            throw UsageError(message: "--background-seconds decodes each file whole with the batch mean: not with --stream or --cmn live/stream")
        }
        let workspace = try loadWorkspace(workspacePath)
        var options = RecognitionOptions(search: search, cepstralMean: cmn ?? .batch, measuresConfidence: !noConfidence && search == .grammar)
        if let decoderArgs { options.decoderArguments = decoderArgs }
        if let phoneLoop { options.phoneLoopAlongside = phoneLoop }
        if let marginRoom { options.marginRoom = marginRoom }
        if anyEnglish == true { options.anyEnglish = .standard }
        if let secondReading { options.secondReading = secondReading }
        if let courtesy { options.courtesyWords = courtesy }
        if let valuesMargin { options.valuesMarginPoint = valuesMargin }
        switch otherSpeech {
        case .some(.some(let probability)): options.otherSpeech = OtherSpeech(phoneProbability: probability)
        case .some(.none): options.otherSpeech = nil
        case .none: break
        }
        switch otherValue {
        case .some(.some(let probability)): options.otherValue = OtherValue(phoneProbability: probability)
        case .some(.none): options.otherValue = nil
        case .none: break
        }
        switch noisyBelow {
        case .some(.some(let threshold)): options.noisy?.threshold = threshold
        case .some(.none): options.noisy = nil
        case .none: break
        }
        switch moderateBelow {
        case .some(.some(let below)): options.moderate?.below = below
        case .some(.none): options.moderate = nil
        case .none: break
        }
        if let noisyDecoderArgs {
            guard options.effectiveNoisy != nil else {
                throw UsageError(message: "--noisy-decoder-args needs the noisy-speech decoder (not with --noisy-below off or --cmn live)")
            }
            options.noisy?.decoderArguments.merge(noisyDecoderArgs) { $1 }
        }
        let recognizer = try SpeechCLI.recognizer(workspace: workspace, model: model, options: options)
        let understanding = SpeechUnderstanding(workspace: workspace)
        var failures = 0
        var exitCode: Int32 = 0
        for file in files {
            do {
                var audio = try SpeechCLI.readSpeech(file)
                if let denoise {
                    var configuration = NoiseSuppressor.Configuration()
                    configuration.suppression = denoise
                    let suppressor = try NoiseSuppressor(configuration: configuration)
                    var cleaned = try suppressor.process(audio)
                    cleaned.append(suppressor.flush())
                    audio = cleaned
                }
                var endpoint: (reason: String, dismissed: Int)?
                // Whole files are decoded whatever they hold (the benchmark's way), but the reader is told when the
                // appliance would not have decoded this one at all: only a knock or a chime, no voice.
                var onlyNoise = false
                let transcript: Transcript
                if stream {
                    var endpointing = Endpointer.Configuration()
                    if voicing == false { endpointing.voicedHold = 0 }
                    if let minimumVoiced { endpointing.minimumVoiced = minimumVoiced }
                    let heard = try streamed(audio, file: file, recognizer: recognizer,
                                             decodedTail: decodedTail ?? UtteranceListener.defaultDecodedTail, paced: !unpaced,
                                             endpointing: endpointing)
                    transcript = heard.transcript
                    endpoint = (heard.endpoint, heard.dismissed)
                } else if let backgroundSeconds {
                    let split = min(audio.samples.count, Int(backgroundSeconds * Double(PCMFormat.speech.sampleRate)))
                    transcript = try recognizer.decodeWhole(Array(audio.samples[split...]), background: Array(audio.samples[..<split]))
                } else {
                    transcript = try recognizer.recognize(audio)
                    onlyNoise = (try? Endpointer.heardOnlyNoise(audio)) == true
                }
                let command = understanding.understand(transcript)
                if json {
                    var line = SpeechCLI.json(file: file, command: command)
                    if case .object(var o) = line {
                        if let endpoint {
                            o["endpoint"] = .string(endpoint.reason)
                            o["dismissed"] = .number(Double(endpoint.dismissed))
                        }
                        if onlyNoise { o["heard_only_noise"] = true }
                        line = .object(o)
                    }
                    Output.line(line.serialized())
                } else {
                    print(SpeechCLI.text(file: file, command: command), terminator: "")
                    if onlyNoise { print(Self.onlyNoiseNote) }
                }
            } catch {
                // One bad file does not lose the others' results; the exit code says something failed.
                failures += 1
                // The most specific code wins when files fail differently (66 = a missing file, 65 = bad data).
                exitCode = max(exitCode, (error as? CommandFailure)?.exitCode ?? 65)
                let message = (error as? CommandFailure)?.message ?? "\(file): \(error)"
                printError("hark recognize: \(message)")
                if json { Output.line(JSONValue.object(JSONObject([("file", .string(file)), ("error", .string(message))])).serialized()) }
            }
        }
        return failures == 0 ? 0 : exitCode
    }

    /// Said under a whole file's result when the endpointer finds only sound without a voice in it.
    static let onlyNoiseNote = "  no voice in it: the appliance, the web page and the Wyoming server would dismiss this sound (a knock, a chime) without decoding it"

    /// `audio` through an endpointer and an `UtteranceListener` in 100 ms blocks, each handed over when the
    /// microphone would have delivered it (`PacedAudioSource`, as `hark run --input` does): the first
    /// utterance's transcript, why it ended, and how many utterances before it were dismissed as noise.
    static func streamed(_ audio: PCMBuffer, file: String, recognizer: SpeechRecognizer, decodedTail: Double,
                         paced: Bool, endpointing: Endpointer.Configuration = Endpointer.Configuration())
    throws -> (transcript: Transcript, endpoint: String, dismissed: Int) {
        let listener = UtteranceListener(recognizer: recognizer, endpointer: try Endpointer(configuration: endpointing), decodedTail: decodedTail)
        let source: any AudioSource = paced ? PacedAudioSource(BufferedAudioSource(audio)) : BufferedAudioSource(audio)
        guard let transcript = try listener.listen(to: source, blockFrames: PCMFormat.speech.sampleRate / 10) else {
            let noise = listener.dismissedUtterances
            throw CommandFailure(message: "\(file): no speech found"
                                 + (noise > 0 ? " (\(noise) sound\(noise == 1 ? "" : "s") without a voice dismissed)" : ""), exitCode: 65)
        }
        let endpoint = switch listener.endReason {
        case .maximumLength: "maximum_length"
        case .trailingSilence: "trailing_silence"
        case nil: "input_ended"
        }
        return (transcript, endpoint, listener.dismissedUtterances)
    }
}
