import Foundation
import HarkAudio
import HarkCore
import Testing

/// The speech commands end to end through the built binary: say → recognize, and every bad input a clear
/// error with its own exit code.
@Suite("Speech commands", .serialized)
struct SpeechCLITests {
    static func scratch() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hark-cli-speech-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    static func json(_ line: Substring) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    }

    @Test("hark grammar --fsg prints the word automaton the recogniser decodes with; two outputs at once is a usage error")
    func grammarAutomaton() throws {
        let r = try CLITests.hark(["grammar", "--fsg"])
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.stdout.split(separator: "\n")
        #expect(lines.first == "FSG_BEGIN grammar" && lines.last == "FSG_END")
        #expect(lines.contains { $0.hasPrefix("TRANSITION ") && $0.hasSuffix(" light") }, "\(r.stdout.prefix(400))")
        #expect(r.stderr.contains("states") && r.stderr.contains("word transitions"), "\(r.stderr)")
        let both = try CLITests.hark(["grammar", "--fsg", "--arpa"])
        #expect(both.status == 64 && both.stderr.contains("exclude"), "\(both.stderr)")
        // The courtesy words, as the recogniser hears clean speech: on for home.json (eleven intents), which they
        // make larger; `--courtesy off` prints the examples alone; anything but on or off is a usage error.
        let plain = try CLITests.hark(["grammar", "--fsg", "--courtesy", "off"])
        let transitions = { (fsg: String) in fsg.split(separator: "\n").filter { $0.hasPrefix("TRANSITION ") }.count }
        #expect(plain.status == 0 && transitions(plain.stdout) < transitions(r.stdout), "\(plain.stderr) / \(r.stderr)")
        let wrong = try CLITests.hark(["grammar", "--courtesy", "maybe"])
        #expect(wrong.status == 64 && wrong.stderr.contains("--courtesy"), "\(wrong.stderr)")
    }

    @Test("the automaton is the same in every process: Swift seeds its hashing per process, and the states must not follow it")
    func grammarAutomatonIsTheSameInEveryRun() throws {
        // Before the builder went through its dictionaries in label order, five runs gave five different state numberings,
        // and PocketSphinx, which breaks ties between equal paths by state order, segmented the same clip differently.
        for workspace in ["Intents/home.json", "Intents/barista.json"] {
            let runs = try (0..<4).map { _ in try CLITests.hark(["grammar", "--fsg", "--workspace", workspace]) }
            #expect(runs.allSatisfy { $0.status == 0 }, "\(runs.map(\.stderr))")
            #expect(Set(runs.map(\.stdout)).count == 1, "\(workspace): \(Set(runs.map(\.stdout)).count) different automata from 4 runs")
        }
    }

    /// "turn off the light" as `hark say` speaks it, written to `dir`: its path and its audio at 16 kHz mono.
    static func saidCommand(in dir: URL) throws -> (path: String, audio: PCMBuffer) {
        let spoken = dir.appendingPathComponent("off.wav").path
        let said = try CLITests.hark(["say", "--output", spoken, "turn off the light"])
        try #require(said.status == 0, "\(said.stderr)")
        return (spoken, try AudioFile.read(spoken).converted(to: .speech))
    }

    @Test("hark recognize --stream feeds a file through the endpointer: the first utterance, why it ended, when its result was ready")
    func recognizeStreamed() throws {
        let dir = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let (spoken, speech) = try Self.saidCommand(in: dir)
        // Half a second of quiet before, one and a half after: the endpointer ends the utterance on the silence.
        var padded = PCMBuffer(format: .speech, samples: [Int16](repeating: 0, count: 8_000))
        padded.append(speech)
        padded.append(PCMBuffer(format: .speech, samples: [Int16](repeating: 0, count: 24_000)))
        let wav = dir.appendingPathComponent("off-padded.wav").path
        try AudioFile.write(padded, to: wav)

        for extra in [[String](), ["--unpaced"], ["--unpaced", "--decoded-tail", "0.8"]] {
            let r = try CLITests.hark(["recognize", "--json", "--stream"] + extra + [wav, spoken])
            #expect(r.status == 0, "\(r.stderr)")
            let lines = r.stdout.split(separator: "\n")
            #expect(lines.count == 2)
            let padLine = try Self.json(lines[0]), bare = try Self.json(lines[1])
            #expect(padLine["transcript"] as? String == "turn off the light", "\(lines[0])")
            #expect(padLine["endpoint"] as? String == "trailing_silence" && padLine["result_delay_ms"] is Double, "\(lines[0])")
            #expect((padLine["decode_cpu_ms"] as? Double ?? 0) > 0)
            // The decoded audio stops 0.3 s after the speech (0.8 s with --decoded-tail 0.8), not at the file's end.
            let seconds = padLine["audio_seconds"] as? Double ?? 0
            #expect(seconds < padded.duration - (extra.contains("0.8") ? 0.6 : 1.1), "\(seconds) of \(padded.duration)")
            // The unpadded file ends before the endpointer hears 0.8 s of silence.
            #expect(bare["endpoint"] as? String == "input_ended" && bare["transcript"] as? String == "turn off the light", "\(lines[1])")
        }
        let misuse = try CLITests.hark(["recognize", "--decoded-tail", "0.3", wav])
        #expect(misuse.status == 64 && misuse.stderr.contains("--stream"), "\(misuse.stderr)")
        let silent = dir.appendingPathComponent("silent.wav").path
        try AudioFile.write(PCMBuffer(format: .speech, samples: [Int16](repeating: 0, count: 16_000)), to: silent)
        let none = try CLITests.hark(["recognize", "--json", "--stream", "--unpaced", silent])
        #expect(none.status == 65 && none.stderr.contains("no speech found"), "\(none.stderr)")
    }

    @Test("hark recognize --stream skips a knock before the command and says so; --min-voiced 0 takes the knock; a knock alone is no speech, and decoded whole it is marked heard_only_noise")
    func recognizeStreamedAfterAKnock() throws {
        let dir = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let speech = try Self.saidCommand(in: dir).audio
        // A quiet room; at 0.5 s a knock (white noise decaying over 40 ms, 0.25 s); the command 1.5 s later; quiet.
        var generator = SplitMix64(seed: 53)
        let knock = (0..<4_000).map { i in
            Int16(clamping: Int((Double.random(in: -8_000...8_000, using: &generator) * exp(-Double(i) / 640)).rounded()))
        }
        let before = [Int16](repeating: 0, count: 8_000) + knock + [Int16](repeating: 0, count: 24_000)
        let wav = dir.appendingPathComponent("knock-off.wav").path
        try AudioFile.write(PCMBuffer(format: .speech, samples: before + speech.samples + [Int16](repeating: 0, count: 24_000)), to: wav)
        let alone = dir.appendingPathComponent("knock.wav").path
        try AudioFile.write(PCMBuffer(format: .speech, samples: before), to: alone)

        let skipped = try CLITests.hark(["recognize", "--json", "--stream", "--unpaced", wav])
        #expect(skipped.status == 0, "\(skipped.stderr)")
        let line = try Self.json(skipped.stdout.split(separator: "\n")[0])
        #expect(line["transcript"] as? String == "turn off the light" && line["dismissed"] as? Double == 1, "\(line)")

        let kept = try CLITests.hark(["recognize", "--json", "--stream", "--unpaced", "--min-voiced", "0", wav])
        let first = try Self.json(kept.stdout.split(separator: "\n")[0])
        #expect(first["transcript"] as? String != "turn off the light" && first["dismissed"] as? Double == 0, "\(first)")
        // The knock's utterance: 0.3 s of room before it, the knock, 0.3 s after.
        #expect((first["audio_seconds"] as? Double ?? 99) < 1.0, "\(first)")

        let nothing = try CLITests.hark(["recognize", "--json", "--stream", "--unpaced", alone])
        #expect(nothing.status == 65 && nothing.stderr.contains("no speech found (1 sound without a voice dismissed)"), "\(nothing.stderr)")
        // Decoded whole (the benchmark's way) the knock still gets a decoding, and the reader is told the appliance would
        // not have decoded it; the knock before the words changes nothing there.
        let whole = try CLITests.hark(["recognize", "--json", alone, wav])
        let lines = try whole.stdout.split(separator: "\n").map { try Self.json($0) }
        #expect(lines.count == 2 && lines[0]["heard_only_noise"] as? Bool == true && lines[1]["heard_only_noise"] == nil, "\(whole.stdout)")
        let told = try CLITests.hark(["recognize", alone])
        #expect(told.status == 0 && told.stdout.contains("no voice in it: the appliance"), "\(told.stdout)")
        let wrong = try CLITests.hark(["recognize", "--stream", "--min-voiced", "-1", wav])
        #expect(wrong.status == 64 && wrong.stderr.contains("--min-voiced"), "\(wrong.stderr)")
        let misuse = try CLITests.hark(["recognize", "--min-voiced", "0.1", wav])
        #expect(misuse.status == 64 && misuse.stderr.contains("--stream"), "\(misuse.stderr)")
    }

    @Test("hark recognize --stream ends a command followed by clatter; --voicing off judges by level alone and does not")
    func recognizeStreamedInClatter() throws {
        let dir = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let speech = try Self.saidCommand(in: dir).audio
        // Half a second of a quiet room, the command, then 2.5 s of knocks (white noise decaying over 40 ms, four a
        // second) far above the room's level, as dishes in a kitchen after the words.
        var samples = [Int16](repeating: 0, count: 8_000) + speech.samples + [Int16](repeating: 0, count: 40_000)
        var generator = SplitMix64(seed: 47)
        for i in samples.indices {
            var value = Double.random(in: -60...60, using: &generator)
            let afterWords = i - 8_000 - speech.frameCount
            if afterWords >= 0 {
                value += Double.random(in: -6_000...6_000, using: &generator) * exp(-Double(afterWords % 4_000) / 640)
            }
            samples[i] = Int16(clamping: Int(value.rounded()) + Int(samples[i]))
        }
        let wav = dir.appendingPathComponent("off-clatter.wav").path
        try AudioFile.write(PCMBuffer(format: .speech, samples: samples), to: wav)

        let voiced = try CLITests.hark(["recognize", "--json", "--stream", "--unpaced", wav])
        #expect(voiced.status == 0, "\(voiced.stderr)")
        let line = try Self.json(voiced.stdout.split(separator: "\n")[0])
        #expect(line["endpoint"] as? String == "trailing_silence" && line["transcript"] as? String == "turn off the light", "\(line)")
        // The decoded audio stops 0.3 s after the words, not somewhere in the knocks.
        #expect((line["audio_seconds"] as? Double ?? 99) < 0.5 + speech.duration + 0.5, "\(line)")

        let level = try CLITests.hark(["recognize", "--json", "--stream", "--unpaced", "--voicing", "off", wav])
        #expect(level.status == 0, "\(level.stderr)")
        #expect(try Self.json(level.stdout.split(separator: "\n")[0])["endpoint"] as? String == "input_ended", "\(level.stdout)")

        let misuse = try CLITests.hark(["recognize", "--voicing", "off", wav])
        #expect(misuse.status == 64 && misuse.stderr.contains("--stream"), "\(misuse.stderr)")
        let wrong = try CLITests.hark(["recognize", "--stream", "--voicing", "maybe", wav])
        #expect(wrong.status == 64 && wrong.stderr.contains("--voicing"), "\(wrong.stderr)")
    }

    @Test("hark say writes a WAV that hark recognize understands as the command; JSON lines have the documented fields")
    func sayThenRecognize() throws {
        let dir = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let wav = dir.appendingPathComponent("on.wav").path
        let say = try CLITests.hark(["say", "--output", wav, "turn on the light"])
        #expect(say.status == 0, "\(say.stderr)")
        // The same audio as 8 kHz stereo: converted, not rejected.
        let stereo = dir.appendingPathComponent("on-8k-stereo.wav").path
        let audio = try AudioFile.read(wav)
        try AudioFile.write(try audio.converted(to: PCMFormat(sampleRate: 8_000, channels: 2)), to: stereo)

        // Without the second reading: through the 8 kHz channel its free search reads "turn on the light off", which means
        // no command surely enough to answer and stops the grammar's right sentence (docs/speech.md, "A second reading
        // decides", its price); what this checks is the conversion and the fields.
        let r = try CLITests.hark(["recognize", "--json", "--second-reading", "off", wav, stereo])
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.stdout.split(separator: "\n")
        #expect(lines.count == 2)
        for line in lines {
            let o = try Self.json(line)
            for key in ["file", "transcript", "acoustic_confidence", "audio_seconds", "decode_ms", "snr_db", "noisy_decoding", "moderate_decoding", "intents", "entities", "accepted"] {
                #expect(o[key] != nil, "missing \(key) in \(line)")
            }
            // No background at all: the quietest tenth of this 0.8 s clip is still speech, so the estimate (24 dB)
            // is the level range of the voice itself, above the noisy-speech threshold.
            #expect((o["snr_db"] as? Double ?? 0) > 20 && o["noisy_decoding"] as? Bool == false, "\(line)")
            // Under 40 dB, yet synthetic audio has no noise floor of its own (digital silence between the words), so
            // the moderate-noise decoder does not take it: the estimate measured the voice, not a room.
            #expect((o["snr_db"] as? Double ?? 99) < 40 && o["moderate_decoding"] as? Bool == false, "\(line)")
            #expect(o["transcript"] as? String == "turn on the light", "\(line)")
            // The words with their times, in order, inside the clip: what --json adds to the transcript.
            let words = o["words"] as? [[String: Any]] ?? []
            #expect(words.compactMap { $0["word"] as? String } == ["turn", "on", "the", "light"], "\(line)")
            let times: [Double] = words.flatMap { word -> [Double] in [(word["start"] as? Double) ?? -1, (word["end"] as? Double) ?? -1] }
            let length = (o["audio_seconds"] as? Double) ?? 0
            #expect(times == times.sorted() && (times.first ?? -1) >= 0 && (times.last ?? .infinity) <= length, "\(times)")
            // Each word's own acoustic margin: a number for every word, on the utterance margin's scale.
            let margins = words.compactMap { $0["margin"] as? Double }
            #expect(margins.count == 4 && margins.allSatisfy { $0 > -15 && $0 < 5 }, "\(line)")
            #expect(((o["intents"] as? [[String: Any]])?.first?["intent"]) as? String == "OnLight")
            #expect(o["accepted"] as? Bool == true)
        }
        // With the second reading (deciding by default; checking only), the clean clip reads the same both ways and is
        // still accepted, the grammar's sentence answering; its fields are there.
        for use in ["decide", "check"] {
            let read = try Self.json(try CLITests.hark(["recognize", "--json", "--second-reading", use, wav]).stdout.split(separator: "\n")[0])
            #expect(read["second_reading"] as? String == "turn on the light" && read["second_reading_intent"] as? String == "OnLight", "\(read)")
            #expect(read["second_reading_margin"] is Double && read["second_reading_fluency"] is Double && read["accepted"] as? Bool == true, "\(read)")
            #expect(read["decided_by_reading"] == nil && (read["second_reading_confidence"] is Double) == (use == "decide"), "\(read)")
        }
        let unread = try Self.json(try CLITests.hark(["recognize", "--json", "--second-reading", "off", wav]).stdout.split(separator: "\n")[0])
        #expect(unread["second_reading"] == nil && unread["accepted"] as? Bool == true, "\(unread)")
        let read = try Self.json(try CLITests.hark(["recognize", "--json", wav]).stdout.split(separator: "\n")[0])
        let badReading = try CLITests.hark(["recognize", "--second-reading", "maybe", wav])
        #expect(badReading.status == 64 && badReading.stderr.contains("--second-reading"), "\(badReading.stderr)")
        // The values' margin: reported; on (the default), off or at a point, a command whose values fit is accepted.
        #expect(read["values_margin"] is Double, "\(read)")
        let valued = try Self.json(try CLITests.hark(["recognize", "--json", "--values-margin", "off", wav]).stdout.split(separator: "\n")[0])
        #expect(valued["accepted"] as? Bool == true && (valued["values_margin"] as? Double ?? -99) > -4.25, "\(valued)")
        for bad in ["maybe", "1", "nan"] {
            let badValues = try CLITests.hark(["recognize", "--values-margin", bad, wav])
            #expect(badValues.status == 64 && badValues.stderr.contains("--values-margin"), "\(bad): \(badValues.stderr)")
        }
        // The human-readable form lists the margins too.
        let readable = try CLITests.hark(["recognize", wav])
        #expect(readable.status == 0 && readable.stdout.contains("acoustic margin per word: turn "), "\(readable.stdout)")
        // The text path gives the same intent for the same words.
        let parsed = try Self.json(try CLITests.hark(["parse", "--json", "turn on the light"]).stdout.split(separator: "\n")[0])
        #expect(((parsed["intents"] as? [[String: Any]])?.first?["intent"]) as? String == "OnLight")

        // Through libspeexdsp's noise suppressor first: the same command; a nonsense attenuation is a usage error.
        let denoised = try CLITests.hark(["recognize", "--json", "--denoise", "20", wav])
        #expect(denoised.status == 0, "\(denoised.stderr)")
        #expect(try Self.json(denoised.stdout.split(separator: "\n")[0])["transcript"] as? String == "turn on the light")
        let badDenoise = try CLITests.hark(["recognize", "--denoise", "0", wav])
        #expect(badDenoise.status == 64 && badDenoise.stderr.contains("--denoise"), "\(badDenoise.stderr)")

        // --noisy-below 100 treats even this clean file as noisy; a threshold that is not a number is a usage error.
        let forced = try CLITests.hark(["recognize", "--json", "--noisy-below", "100", wav])
        #expect(forced.status == 0, "\(forced.stderr)")
        let forcedLine = try Self.json(forced.stdout.split(separator: "\n")[0])
        #expect(forcedLine["noisy_decoding"] as? Bool == true && forcedLine["transcript"] as? String == "turn on the light", "\(forced.stdout)")
        let off = try CLITests.hark(["recognize", "--json", "--noisy-below", "off", wav])
        #expect(try Self.json(off.stdout.split(separator: "\n")[0])["noisy_decoding"] as? Bool == false, "\(off.stdout)")
        let plain = try CLITests.hark(["recognize", "--json", "--moderate-below", "off", wav])
        let plainLine = try Self.json(plain.stdout.split(separator: "\n")[0])
        #expect(plainLine["moderate_decoding"] as? Bool == false && plainLine["transcript"] as? String == "turn on the light", "\(plain.stdout)")
        let badNoisy = try CLITests.hark(["recognize", "--noisy-below", "loud", wav])
        #expect(badNoisy.status == 64 && badNoisy.stderr.contains("--noisy-below"), "\(badNoisy.stderr)")

        let t = try CLITests.hark(["transcribe", "--json", wav])
        #expect(t.status == 0)
        #expect(try Self.json(t.stdout.split(separator: "\n")[0])["transcript"] as? String == "turn on the light")
    }

    @Test("Corrupt, empty and missing files are errors naming the file; the other files are still answered")
    func badFiles() throws {
        let dir = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let corrupt = dir.appendingPathComponent("corrupt.wav")
        try Data((0..<4_000).map { UInt8(truncatingIfNeeded: $0 &* 7919) }).write(to: corrupt)
        let empty = dir.appendingPathComponent("empty.wav")
        try Data().write(to: empty)
        let good = dir.appendingPathComponent("good.wav").path
        #expect(try CLITests.hark(["say", "--output", good, "take a picture"]).status == 0)

        let r = try CLITests.hark(["recognize", "--json", corrupt.path, empty.path, good])
        #expect(r.status == 65)
        #expect(r.stderr.contains(corrupt.path) && r.stderr.contains(empty.path), "\(r.stderr)")
        let lines = r.stdout.split(separator: "\n")
        #expect(lines.count == 3)
        #expect(try Self.json(lines[0])["error"] != nil)
        #expect(try Self.json(lines[2])["transcript"] as? String == "take a picture")

        let missing = try CLITests.hark(["recognize", dir.appendingPathComponent("nope.wav").path])
        #expect(missing.status == 66)
        #expect(missing.stderr.contains("nope.wav"))
    }

    @Test("transcribe takes extra decoder settings as name-value pairs and refuses a malformed list, naming the option")
    func transcribeDecoderArguments() throws {
        for bad in ["-beam", "beam 1e-40", "-beam 1e-40 -wbeam"] {
            let r = try CLITests.hark(["transcribe", "--general", "--decoder-args", bad, "x.wav"])
            #expect(r.status == 64, "\(bad): \(r.status)")
            #expect(r.stderr.contains("--decoder-args"), "\(bad): \(r.stderr)")
        }
        let dir = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let wav = dir.appendingPathComponent("on.wav").path
        let say = try CLITests.hark(["say", "--output", wav, "turn on the light"])
        #expect(say.status == 0, "\(say.stderr)")
        let narrow = try CLITests.hark(["transcribe", "--general", "--json", "--decoder-args", "-beam 1e-40 -fwdflat no", wav])
        #expect(narrow.status == 0, "\(narrow.stderr)")
        #expect(narrow.stdout.contains("\"acoustic_margin\""), "\(narrow.stdout)")
    }

    @Test("recognize hands settings to the noisy-speech decoder, refuses a malformed list and refuses them without that decoder")
    func recognizeNoisyDecoderArguments() throws {
        for bad in ["-topn", "topn 8", "-topn 8 -pip"] {
            let r = try CLITests.hark(["recognize", "--noisy-decoder-args", bad, "x.wav"])
            #expect(r.status == 64, "\(bad): \(r.status)")
            #expect(r.stderr.contains("--noisy-decoder-args"), "\(bad): \(r.stderr)")
        }
        let off = try CLITests.hark(["recognize", "--noisy-below", "off", "--noisy-decoder-args", "-topn 8", "x.wav"])
        #expect(off.status == 64, "\(off.status)")
        #expect(off.stderr.contains("--noisy-below off"), "\(off.stderr)")
        let live = try CLITests.hark(["recognize", "--cmn", "live", "--noisy-decoder-args", "-topn 8", "x.wav"])
        #expect(live.status == 64, "\(live.status)")
        #expect(live.stderr.contains("--cmn live"), "\(live.stderr)")

        // The settings reach the noisy-speech decoder (the one built with the noisy-speech means), and PocketSphinx's
        // refusal of a bad value is an error naming them, before any file is read.
        let rejected = try CLITests.hark(["recognize", "--noisy-decoder-args", "-topn x", "x.wav"])
        #expect(rejected.status == 65, "\(rejected.status)")
        #expect(rejected.stderr.contains("-topn x"), "\(rejected.stderr)")
        #expect(rejected.stderr.contains("en-us-noisy.means"), "\(rejected.stderr)")
    }

    @Test("--moderate-means and --moderate-below: a missing file and a bad value are clear errors; the JSON says which decoder")
    func moderateOptions() throws {
        let means = try CLITests.hark(["recognize", "--moderate-means", "/nonexistent/moderate.means", "x.wav"])
        #expect(means.status == 66, "\(means.status)")
        #expect(means.stderr.contains("--moderate-means /nonexistent/moderate.means"), "\(means.stderr)")
        for bad in ["loud", "-5", "101"] {
            let r = try CLITests.hark(["recognize", "--moderate-below", bad, "x.wav"])
            #expect(r.status == 64, "\(bad): \(r.status)")
            #expect(r.stderr.contains("--moderate-below"), "\(bad): \(r.stderr)")
        }
    }

    @Test("A missing model directory and an unknown capture or playback device are clear errors")
    func missingModelAndDevices() throws {
        let model = try CLITests.hark(["transcribe", "--model", "/nonexistent/hark-model", "x.wav"])
        #expect(model.status == 65)
        #expect(model.stderr.contains("/nonexistent/hark-model"), "\(model.stderr)")

        let means = try CLITests.hark(["recognize", "--noisy-means", "/nonexistent/noisy.means", "x.wav"])
        #expect(means.status == 66)
        #expect(means.stderr.contains("--noisy-means /nonexistent/noisy.means"), "\(means.stderr)")

        let listen = try CLITests.hark(["listen", "--device", "hark_no_such_mic", "--wait", "1"])
        #expect(listen.status == 69)
        #expect(listen.stderr.contains("hark_no_such_mic"), "\(listen.stderr)")

        let say = try CLITests.hark(["say", "--device", "hark_no_such_speaker", "hello"])
        #expect(say.status == 69)
        #expect(say.stderr.contains("hark_no_such_speaker"), "\(say.stderr)")
    }

    @Test("hark listen hears one command through alsa-lib's file plugin and stops at the trailing silence")
    func listenThroughALSA() throws {
        let dir = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let wav = dir.appendingPathComponent("cmd.wav").path
        #expect(try CLITests.hark(["say", "--output", wav, "switch off the lamp"]).status == 0)
        var stream = PCMBuffer(format: .speech, samples: [Int16](repeating: 0, count: 8_000))
        stream.append(try AudioFile.read(wav))
        stream.append(PCMBuffer(format: .speech, samples: [Int16](repeating: 0, count: 32_000)))
        let raw = dir.appendingPathComponent("mic.raw").path
        try AudioFile.write(stream, to: raw)
        let config = dir.appendingPathComponent("asoundrc")
        try "pcm.cli_mic { type file slave.pcm { type null } file \"/dev/null\" infile \"\(raw)\" format \"raw\" }\n"
            .write(to: config, atomically: true, encoding: .utf8)
        let r = try CLITests.hark(["listen", "--device", "cli_mic", "--alsa-config", config.path, "--json"])
        #expect(r.status == 0, "\(r.stderr)")
        let o = try Self.json(try #require(r.stdout.split(separator: "\n").first))
        #expect(((o["intents"] as? [[String: Any]])?.first?["intent"]) as? String == "OffLight", "\(r.stdout)")
    }
}
