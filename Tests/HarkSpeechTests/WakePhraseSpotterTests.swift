import Foundation
import HarkAudio
import HarkTestSupport
import Testing

@testable import HarkSpeech

/// The shipped wake settings (Models/wake.json) on streams made of synthetic speech: eSpeak NG, and flite when it is
/// installed (`make test` installs it), each from its command-line tool.
@Suite("Wake phrase spotter", .serialized)
struct WakePhraseSpotterTests {
    static let settings: WakeSettings = {
        do { return try WakeSettings.load(from: WakeSettingsTests.shipped) } catch { fatalError("\(error)") }
    }()
    /// The shipped verifier (`verifier` in Models/wake.json).
    static let verifier: WakeVerifier = {
        do {
            return try WakeVerifier(contentsOf: WakeSettingsTests.shipped.deletingLastPathComponent().appendingPathComponent(settings.verifier ?? "-"))
        } catch { fatalError("\(error)") }
    }()
    static let flite = FreshSpeech.fliteTool
    /// eSpeak NG's voice is far from the speakers the acoustic model learnt from (docs/measurements.md,
    /// "Keyphrase spotting and synthetic voices": 0/12 eSpeak NG clips spotted): in a stream of a few
    /// sentences its "hey hark" scored 1e-29 to 1e-36 with weakest-word margins of -2.1 to -4.5, below the
    /// shipped thresholds, which are set for real and flite voices (docs/wake-phrase.md). So eSpeak NG
    /// streams are heard with looser thresholds; the chit-chat in the same stream must still wake nothing.
    /// And a wider keyphrase beam: at PocketSphinx's 1e-48 the keyphrase search prunes this voice's phrase before
    /// it ends, so the stream below got no keyphrase hit at all, at any threshold (with the confirmation and the
    /// verifier off too); at 1e-80 the same phrase scores 1e-41 (docs/wake-phrase.md, "Longer phrases").
    static let eSpeakSettings: WakeSettings = {
        var loose = settings
        loose.keyphraseThreshold = 1e-45
        loose.keyphraseBeam = 1e-80
        loose.confirmationThreshold = -6
        return loose
    }()

    /// Chit-chat with no wake phrase: the negatives, and what the stream hears before the phrase (an appliance
    /// has heard its room's voices for a while before anyone wakes it).
    static let chitChat = [
        "the weather was lovely this afternoon", "did you remember to buy some milk", "my sister is coming over on sunday",
        "we parked the car in the dark", "this book is far too long", "could you pass me the salt please",
    ]

    /// Speech of `text` as 16 kHz mono: flite's voice, or eSpeak NG's `en` (no `voice`), each made in a process of its
    /// own (`FreshSpeech`): in process, what eSpeak NG said before (other tests, in any order) changes its next output
    /// (docs/speech.md, "Synthesis"), and the chit-chat above then scored anywhere from far below to just at the loose
    /// eSpeak thresholds (a false wake at -5.97 against -6 in one full-suite run).
    static func speech(_ text: String, flite voice: String? = nil) throws -> PCMBuffer {
        if let voice { return try FreshSpeech.flite(text, voice: voice) }
        return try FreshSpeech.eSpeak(text, voice: "en")
    }

    /// A faint floor, as a microphone has, so there is no digital silence.
    static func quiet(_ seconds: Double) -> [Int16] {
        var floor = MicrophoneFloor()
        return floor.quiet(Int(seconds * 16_000))
    }

    /// A stream of `sentences` with a second of quiet between them, and where each sentence's speech starts.
    static func stream(_ sentences: [String], flite voice: String? = nil) throws -> (audio: PCMBuffer, starts: [Double]) {
        var samples = quiet(1)
        var starts: [Double] = []
        for sentence in sentences {
            let clip = try speech(sentence, flite: voice).samples
            starts.append(Double(samples.count + (clip.firstIndex(where: { abs(Int($0)) > 1_000 }) ?? 0)) / 16_000)
            samples += clip
            samples += quiet(1)
        }
        return (PCMBuffer(format: .speech, samples: samples), starts)
    }

    static func detections(_ spotter: WakePhraseSpotter, _ audio: PCMBuffer, chunk: Int) throws -> [WakeDetection] {
        var found: [WakeDetection] = []
        var offset = 0
        while offset < audio.samples.count {
            let end = min(audio.samples.count, offset + chunk)
            if let detection = try spotter.process(PCMBuffer(format: .speech, samples: Array(audio.samples[offset..<end]))) {
                found.append(detection)
            }
            offset = end
        }
        return found
    }

    /// The phrase said alone by the same voice: how long it takes, to say when it should end in the sentence.
    static func phraseSeconds(flite voice: String?) throws -> Double {
        let samples = try speech(settings.phrase, flite: voice).samples
        guard let first = samples.firstIndex(where: { abs(Int($0)) > 1_000 }),
              let last = samples.lastIndex(where: { abs(Int($0)) > 1_000 }) else { return 0 }
        return Double(last - first) / 16_000
    }

    /// "<phrase>, turn on the light" after the chit-chat is heard once, where the phrase ends, whatever the
    /// block size; the chit-chat itself wakes nothing.
    func detectsPhrase(flite voice: String?) throws {
        let settings = voice == nil ? Self.eSpeakSettings : Self.settings
        let sentences = Self.chitChat + ["\(Self.settings.phrase), turn on the light"]
        let (audio, starts) = try Self.stream(sentences, flite: voice)
        let sentenceStart = try #require(starts.last)
        let expectedEnd = sentenceStart + (try Self.phraseSeconds(flite: voice))
        var times: [Double] = []
        for chunk in [320, 1_600, 4_000, audio.samples.count] {
            let spotter = try WakePhraseSpotter(phrase: settings.phrase, settings: settings, verifier: Self.verifier)
            let found = try Self.detections(spotter, audio, chunk: chunk)
            #expect(found.count == 1, "chunks of \(chunk) samples: \(found.map(\.time)) (phrase ends near \(expectedEnd) s)")
            guard let detection = found.first else { continue }
            times.append(detection.time)
            // Synthetic phrase timing is only estimated (the phrase said alone), so the bound is generous.
            #expect(abs(detection.time - expectedEnd) < 0.5, "ended at \(detection.time) s, expected near \(expectedEnd) s")
            #expect(detection.start >= sentenceStart - 0.5 && detection.start < detection.time)
            #expect(detection.commandStart >= detection.time - 0.3 && detection.commandStart < audio.duration)
            #expect(!detection.commandAudio.isEmpty)
            #expect(detection.keyphraseScore >= log10(settings.keyphraseThreshold))
            if let margin = detection.confirmationScore { #expect(margin >= settings.confirmationThreshold) }
            #expect(spotter.realTimeFactor > 0 && spotter.realTimeFactor < 1)
        }
        // Checks fall at fixed stream positions, so the block size does not move the result.
        #expect(times.allSatisfy { abs($0 - (times.first ?? 0)) < 0.011 }, "\(times)")
    }

    @Test("eSpeak NG: the phrase before a command is detected at about the right time, in blocks of any size")
    func eSpeakPhrase() throws {
        try detectsPhrase(flite: nil)
    }

    @Test("flite: the phrase before a command is detected at about the right time, in blocks of any size",
          .enabled(if: FileManager.default.isExecutableFile(atPath: flite), "flite is not installed (make setup installs it)"),
          arguments: ["kal", "slt"])
    func flitePhrase(voice: String) throws {
        try detectsPhrase(flite: voice)
    }

    @Test("The command without the phrase, and chit-chat, wake nothing")
    func negatives() throws {
        for voice in [nil] + (FileManager.default.isExecutableFile(atPath: Self.flite) ? ["kal"] : []) {
            let (audio, _) = try Self.stream(["turn on the light"] + Self.chitChat + ["what time is it", "take a picture"], flite: voice)
            let settings = voice == nil ? Self.eSpeakSettings : Self.settings
            let spotter = try WakePhraseSpotter(phrase: settings.phrase, settings: settings, verifier: Self.verifier)
            let found = try Self.detections(spotter, audio, chunk: 1_600)
            #expect(found.isEmpty, "\(voice ?? "eSpeak NG"): woke at \(found.map(\.time))")
        }
    }

    @Test("reset() starts the stream again: the same audio gives the same detection",
          .enabled(if: FileManager.default.isExecutableFile(atPath: flite), "flite is not installed (make setup installs it)"))
    func reset() throws {
        let (audio, _) = try Self.stream(Self.chitChat + ["\(Self.settings.phrase), take a picture"], flite: "kal")
        let spotter = try WakePhraseSpotter(phrase: Self.settings.phrase, settings: Self.settings, verifier: Self.verifier)
        let first = try Self.detections(spotter, audio, chunk: 1_600)
        try spotter.reset()
        let again = try Self.detections(spotter, audio, chunk: 1_600)
        #expect(first.map(\.time) == again.map(\.time))
        #expect(!first.isEmpty)
    }

    @Test("A phrase word missing from the dictionary is pronounced by eSpeak NG, or named in the error")
    func unknownWord() throws {
        var other = Self.settings
        other.verifier = nil  // the shipped verifier knows only its own phrase
        let spotter = try WakePhraseSpotter(phrase: "hey zorblat", settings: other)
        #expect(spotter.guessedWords == ["zorblat"])
        #expect(spotter.phrase == "hey zorblat")
        do {
            _ = try WakePhraseSpotter(phrase: "Hey, Zorblat!", model: SpeechModel(), settings: other, pronunciations: nil)
            Issue.record("an unpronounceable phrase was accepted")
        } catch let error as WakeError {
            guard case let .unknownWords(words, _, _) = error else {
                Issue.record("\(error)")
                return
            }
            #expect(words == ["zorblat"])
            #expect(error.description.contains("'zorblat'"))
        }
        #expect(throws: WakeError.emptyPhrase("  ")) { try WakePhraseSpotter(phrase: "  ", settings: other) }
    }

    @Test("Audio that is not 16 kHz mono is refused")
    func wrongFormat() throws {
        let spotter = try WakePhraseSpotter(phrase: Self.settings.phrase, settings: Self.settings, verifier: Self.verifier)
        let format = PCMFormat(sampleRate: 22_050, channels: 1)
        #expect(throws: WakeError.unsupportedFormat(format)) {
            try spotter.process(PCMBuffer(format: format, samples: [0, 0, 0]))
        }
    }
}

@Suite("Wake audio history")
struct WakeAudioHistoryTests {
    @Test("A window the history only partly holds comes back at its full length, zeros where nothing is kept")
    func paddedWindow() {
        var history = WakeAudioHistory(capacity: 4)
        history.append([1, 2, 3, 4, 5, 6][...])
        history.trim()  // keeps stream positions 2..<6: 3, 4, 5, 6
        #expect(history.firstIndex == 2 && history.endIndex == 6)
        #expect(history.padded(from: 0, to: 8) == [0, 0, 3, 4, 5, 6, 0, 0])
        #expect(history.padded(from: 3, to: 5) == [4, 5])
        #expect(history.padded(from: -3, to: 1) == [0, 0, 0, 0])  // before the stream began
        #expect(history.padded(from: 7, to: 9) == [0, 0])  // not yet heard
        #expect(Array(history.slice(from: 0, to: 8)) == [3, 4, 5, 6])
    }
}

extension WakePhraseSpotterTests {
    @Test("A longer phrase needs a wider keyphrase beam: flite kal's \"hark assistant\" is spotted with 1e-80, not with the default",
          .enabled(if: FileManager.default.isExecutableFile(atPath: flite), "flite is not installed (make setup installs it)"))
    func keyphraseBeam() throws {
        let (audio, starts) = try Self.stream(Self.chitChat + ["hark assistant, turn on the light"], flite: "kal")
        var settings = WakeSettings(phrase: "hark assistant", keyphraseThreshold: 1e-60, confirms: false)
        #expect(settings.keyphraseBeam == 1e-48)
        let narrow = try Self.detections(try WakePhraseSpotter(phrase: settings.phrase, settings: settings), audio, chunk: 1_600)
        settings.keyphraseBeam = 1e-80
        let wide = try Self.detections(try WakePhraseSpotter(phrase: settings.phrase, settings: settings), audio, chunk: 1_600)
        #expect(narrow.isEmpty, "\(narrow.map(\.time))")
        #expect(wide.count == 1 && (wide.first?.start ?? 0) >= (starts.last ?? 0) - 0.5, "\(wide.map(\.time)) \(wide.map(\.keyphraseScore)), phrase from \(starts.last ?? 0) s")
    }
}
