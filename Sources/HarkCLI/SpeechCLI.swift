import Foundation
import HarkAudio
import HarkCore
import HarkSpeech

/// What the speech commands share: the model options, building a recogniser, reading audio, JSON shapes.
enum SpeechCLI {
    static let modelUsage = """
          --model DIR       PocketSphinx model directory holding en-us/, cmudict-en-us.dict and
                            en-us-phone.lm.bin (default \(SpeechModel.defaultDirectory.path))
          --acoustic-model DIR  use this acoustic model instead of DIR/en-us (e.g. one adapted by
                            scripts/adapt-model.sh, docs/model-adaptation.md)
          --noisy-means F   Gaussian means for utterances decoded as noisy (default Models/en-us-noisy.means
                            with the stock acoustic model; none: the acoustic model's own)
          --moderate-means F  Gaussian means for utterances in moderate noise (default
                            Models/en-us-moderate.means with the stock acoustic model; none: the model's own)
        """

    static func model(_ args: inout Arguments) throws -> SpeechModel {
        let dir = try args.option("--model")
        let acoustic = try args.option("--acoustic-model")
        let noisyMeans = try args.option("--noisy-means")
        let moderateMeans = try args.option("--moderate-means")
        var model = dir.map { SpeechModel(directory: URL(fileURLWithPath: $0)) } ?? SpeechModel()
        if let acoustic {
            model = SpeechModel(acousticModel: URL(fileURLWithPath: acoustic), dictionary: model.dictionary,
                                phoneLanguageModel: model.phoneLanguageModel, generalLanguageModel: model.generalLanguageModel)
        }
        for (option, value) in [("--noisy-means", noisyMeans), ("--moderate-means", moderateMeans)] {
            if let value, value != "none", !FileManager.default.isReadableFile(atPath: value) {
                throw CommandFailure(message: "\(option) \(value): no such readable file", exitCode: 66)
            }
        }
        let shippedNoisy = modelsFile(SpeechModel.noisyMeansFileName)
        let shippedModerate = modelsFile(SpeechModel.moderateMeansFileName)
        model.noisyMeans = SpeechModel.means(setting: noisyMeans, shipped: shippedNoisy,
                                             stockAcousticModel: acoustic == nil, resolve: { URL(fileURLWithPath: $0) })
        model.moderateMeans = SpeechModel.means(setting: moderateMeans, shipped: shippedModerate,
                                                stockAcousticModel: acoustic == nil, resolve: { URL(fileURLWithPath: $0) })
        if acoustic == nil {
            noteMissingMeans(noisy: (noisyMeans, shippedNoisy), moderate: (moderateMeans, shippedModerate))
        }
        return model
    }

    /// Says so on standard error when the shipped noisy-speech or moderate-noise means are wanted (the stock
    /// acoustic model, no setting) but were not found (`shipped` is nil: `Models/` is in none of the places looked
    /// in, e.g. a `hark` copied away from its checkout): noise is then decoded with the stock means, clearly worse
    /// (docs/model-adaptation.md), and that must not happen silently. `none` (or a file) as the setting says the
    /// user chose.
    static func noteMissingMeans(
        noisy: (setting: String?, shipped: URL?), moderate: (setting: String?, shipped: URL?),
        settings: (noisy: String, moderate: String) = ("--noisy-means", "--moderate-means")
    ) {
        let missing = [(SpeechModel.noisyMeansFileName, noisy, "noisy speech", settings.noisy),
                       (SpeechModel.moderateMeansFileName, moderate, "speech in moderate noise", settings.moderate)]
            .filter { _, means, _, _ in means.setting == nil && means.shipped == nil }
        guard !missing.isEmpty else { return }
        var seen = Set<String>()
        let looked = searchDirectories().map { $0.appendingPathComponent("Models").path }.filter { seen.insert($0).inserted }
            .joined(separator: ", ")
        for (name, _, what, option) in missing {
            printError("note: Models/\(name) was not found (looked in \(looked)): \(what) is decoded with the acoustic " +
                       "model's own means, which hear noisy speech worse; \(option) gives another file, or none to say so")
        }
    }

    /// `Models/pronunciations.dict` next to the working directory or the executable's repository, if any.
    static func customDictionary() -> URL? { modelsFile("pronunciations.dict") }

    /// `Models/NAME` under the working directory or the executable's repository, if there is one.
    static func modelsFile(_ name: String) -> URL? { repositoryFile("Models/\(name)") }

    /// A file shipped with Hark (`Intents/…`, `Models/…`, `web/`, `docs/openapi.json`), looked for in order:
    /// under the working directory; up to four levels above the executable (a checkout's `.build/<config>/hark`);
    /// then in `<prefix>/share/hark` for an executable in `<prefix>/bin` (the .deb's `/usr/bin/hark` reads
    /// `/usr/share/hark`, docs/packaging.md). The executable is `/proc/self/exe`, not `argv[0]`, which is a bare
    /// `hark` when it was found on `PATH`.
    static func repositoryFile(_ relative: String) -> URL? {
        let fm = FileManager.default
        return searchDirectories().map { $0.appendingPathComponent(relative) }.first { fm.fileExists(atPath: $0.path) }
    }

    /// `--decoder-args "NAME VALUE …"` (or another such option): extra PocketSphinx settings as name-value pairs in
    /// one argument, or `nil`.
    static func decoderArguments(_ args: inout Arguments, option: String = "--decoder-args") throws -> [String: String]? {
        try args.option(option, parse: { text -> [String: String]? in
            let parts = text.split(whereSeparator: \.isWhitespace).map(String.init)
            guard !parts.isEmpty, parts.count % 2 == 0 else { return nil }
            var pairs: [String: String] = [:]
            for i in stride(from: 0, to: parts.count, by: 2) {
                guard parts[i].hasPrefix("-"), parts[i].count > 1 else { return nil }
                pairs[parts[i]] = parts[i + 1]
            }
            return pairs
        }, expected: "PocketSphinx name-value pairs such as \"-maxhmmpf 3000\"")
    }

    /// The directories `repositoryFile` looks in, in order.
    static func searchDirectories() -> [URL] {
        let fm = FileManager.default
        var dirs = [URL(fileURLWithPath: fm.currentDirectoryPath)]
        let binary = executable().deletingLastPathComponent()
        var dir = binary
        for _ in 0..<4 { dirs.append(dir); dir = dir.deletingLastPathComponent() }
        if binary.lastPathComponent == "bin" {
            dirs.append(binary.deletingLastPathComponent().appendingPathComponent("share/hark"))
        }
        return dirs
    }

    /// The running executable with symbolic links resolved: `/proc/self/exe` on Linux, else `argv[0]`.
    static func executable() -> URL {
        if let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"), target.hasPrefix("/") {
            return URL(fileURLWithPath: target)
        }
        return URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
    }

    /// The wake-phrase spotter `hark run` listens with: settings from the configuration's `wake.settings`, else
    /// `Models/wake.json`, else the built-in defaults; a bad settings file is a data error (65).
    /// A verifier the settings name (`verifier`) is read from the settings file's folder; a missing or bad one is
    /// a data error too.
    static func wakeSpotter(settingsPath: URL?, model: SpeechModel) throws -> WakePhraseSpotter {
        var settings = WakeSettings()
        var verifier: WakeVerifier?
        if let url = settingsPath ?? modelsFile("wake.json") {
            do {
                settings = try WakeSettings.load(from: url)
                verifier = try settings.verifier.map { try WakeVerifier(contentsOf: url.deletingLastPathComponent().appendingPathComponent($0)) }
            } catch { throw CommandFailure(message: "\(error)", exitCode: 65) }
        }
        do {
            return try WakePhraseSpotter(phrase: settings.phrase, model: model, settings: settings, pronunciations: try pronunciationSource(), verifier: verifier)
        } catch let error as CommandFailure {
            throw error
        } catch {
            throw CommandFailure(message: "wake phrase \"\(settings.phrase)\": \(error)", exitCode: 65)
        }
    }

    static func pronunciationSource() throws -> CustomThenESpeak {
        do { return try CustomThenESpeak(customDictionary: customDictionary()) } catch { throw CommandFailure(message: "\(error)", exitCode: 65) }
    }

    /// A recogniser for `workspace`; a missing model or an unpronounceable word is a data error (65).
    static func recognizer(workspace: Workspace, model: SpeechModel, options: RecognitionOptions) throws -> SpeechRecognizer {
        let source = try pronunciationSource()
        do {
            let recognizer = try SpeechRecognizer(workspace: workspace, model: model, options: options, pronunciations: source)
            if !recognizer.guessedWords.isEmpty {
                printError("note: not in cmudict, pronounced from Models/pronunciations.dict or eSpeak NG: \(recognizer.guessedWords.joined(separator: ", "))")
            }
            return recognizer
        } catch {
            throw CommandFailure(message: "\(error)", exitCode: 65)
        }
    }

    /// Reads FILE as 16 kHz mono (any rate, channels and libsndfile format; converted); a missing file is
    /// exit 66, a corrupt or empty one 65.
    static func readSpeech(_ path: String) throws -> PCMBuffer {
        do {
            return try AudioFile.readSpeech(path)
        } catch let error as SndfileError {
            throw CommandFailure(message: error.description, exitCode: error.kind == .missingFile ? 66 : 65)
        }
    }

    static func round(_ x: Double, _ places: Double = 4) -> JSONValue {
        let scale = pow(10, places)
        return .number((x * scale).rounded() / scale)
    }

    static func transcriptFields(_ t: Transcript, into o: inout JSONObject) {
        o["transcript"] = .string(t.text)
        o["words"] = .array(t.words.map { word in
            var fields: [(String, JSONValue)] = [("word", .string(word.text)), ("start", round(word.start, 3)), ("end", round(word.end, 3))]
            if let margin = word.margin { fields.append(("margin", round(margin))) }
            return .object(JSONObject(fields))
        })
        o["acoustic_confidence"] = round(t.acousticConfidence)
        if let margin = t.acousticMargin { o["acoustic_margin"] = round(margin) }
        if let margin = t.speechMargin { o["speech_margin"] = round(margin) }
        if let margin = t.nearMargin { o["near_margin"] = round(margin) }
        if let margin = t.englishMargin { o["english_margin"] = round(margin) }
        if t.otherSpeech { o["other_speech"] = .bool(true) }
        if t.otherValue {
            o["other_value"] = .bool(true)
            o["other_value_seconds"] = .number(t.otherValueSeconds)
        }
        if let reading = t.secondReading { o["second_reading"] = .string(reading) }
        if let margin = t.secondReadingMargin { o["second_reading_margin"] = round(margin) }
        if let fluency = t.secondReadingFluency { o["second_reading_fluency"] = round(fluency) }
        if let confidence = t.secondReadingConfidence { o["second_reading_confidence"] = round(confidence) }
        if let snr = t.signalToNoise { o["snr_db"] = round(snr, 1) }
        o["noisy_decoding"] = .bool(t.noisyDecoding)
        o["moderate_decoding"] = .bool(t.moderateDecoding)
        o["audio_seconds"] = round(t.audioSeconds, 3)
        o["decode_ms"] = round(t.decodeMilliseconds, 1)
        o["decode_cpu_ms"] = round(t.decodeCPUMilliseconds, 1)
        if let delay = t.resultDelayMilliseconds { o["result_delay_ms"] = round(delay, 1) }
    }

    /// One `hark recognize --json` line: `hark parse --json`'s intents and entities plus the speech fields.
    static func json(file: String, command: SpokenCommand) -> JSONValue {
        var o = JSONObject()
        o["file"] = .string(file)
        transcriptFields(command.transcript, into: &o)
        o["intents"] = .array(command.understanding.reportedIntents(alternates: false).map(\.json))
        o["entities"] = .array(command.understanding.entities.map(\.json))
        if let margin = command.valuesMargin { o["values_margin"] = round(margin) }
        if command.secondReading != nil { o["second_reading_intent"] = command.secondReadingIntent.map { .string($0) } ?? .null }
        if command.decidedByReading { o["decided_by_reading"] = .bool(true) }
        if !command.valuesUnread.isEmpty { o["values_unread"] = .array(command.valuesUnread.map { .string($0) }) }
        o["accepted"] = .bool(command.accepted)
        return .object(o)
    }

    /// The human-readable form of a recognised command.
    static func text(file: String, command: SpokenCommand) -> String {
        let t = command.transcript
        var out = "\(file): \"\(t.text)\"\n"
        out += String(format: "  acoustic confidence %.3f, %.2f s of audio, decoded in %.1f ms\n", t.acousticConfidence, t.audioSeconds, t.decodeMilliseconds)
        let margins = t.words.compactMap { word in word.margin.map { String(format: "%@ %.2f", word.text, $0) } }
        if !margins.isEmpty, let whole = t.acousticMargin {
            out += "  acoustic margin per word: " + margins.joined(separator: ", ") + String(format: " (utterance %.2f", whole)
                + (command.valuesMargin.map { String(format: ", values %.2f", $0) } ?? "") + ")\n"
        }
        if let intent = command.intent {
            out += String(format: "  #%@ %.4f", intent.intent, intent.confidence)
        } else {
            out += "  no intent"
        }
        let entities = command.understanding.entities.map { "@\($0.entity):\($0.value)" }
        out += entities.isEmpty ? "\n" : "  " + entities.joined(separator: " ") + "\n"
        if let reading = t.secondReading {
            let meaning = command.secondReading?.intents.first.map { String(format: "#%@ %.4f", $0.intent, $0.confidence) } ?? "no intent"
            out += "  second reading: \"\(reading)\"  \(meaning)" + (command.decidedByReading ? "  (answers)" : "") + "\n"
        }
        out += command.accepted ? "  accepted\n" : "  rejected (\(rejectionReason(command)))\n"
        return out
    }

    static func rejectionReason(_ c: SpokenCommand) -> String {
        c.rejectionReason(acousticThreshold: SpeechUnderstanding.defaultAcousticThreshold, intentThreshold: Understanding.reportingThreshold)
    }
}
