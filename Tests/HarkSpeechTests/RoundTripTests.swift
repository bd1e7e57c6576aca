import Foundation
import HarkAudio
import HarkCore
import HarkTestSupport
import Testing

@testable import HarkSpeech

/// eSpeak NG speaks, the recogniser listens, the matcher understands: the whole speech path of home.json,
/// in memory and through alsa-lib (its `file` plugin stands in for a sound card).
@Suite("Speech round trip", .serialized)
struct RoundTripTests {
    static let workspace: Workspace = {
        do { return try Workspace.load(from: RecognitionFixtures.home) } catch { fatalError("\(error)") }
    }()
    static func pronunciations() throws -> CustomThenESpeak {
        try CustomThenESpeak(customDictionary: RecognitionFixtures.packageRoot.appendingPathComponent("Models/pronunciations.dict"))
    }

    static func recognizer() throws -> SpeechRecognizer {
        try SpeechRecognizer(workspace: workspace, pronunciations: try pronunciations())
    }

    /// eSpeak NG's default voice at `rate`, made in a process of its own (`FreshSpeech`: the same samples in every run).
    static func speech(_ text: String, rate: Int = 175) throws -> PCMBuffer {
        try FreshSpeech.eSpeak(text, rate: rate)
    }

    /// Commands of every device and information intent of home.json, worded as examples and as paraphrases
    /// that are not examples.
    static let commands: [(String, String)] = [
        ("turn on the light", "OnLight"), ("switch off the lamp", "OffLight"), ("turn off the light", "OffLight"),
        ("take a picture", "TakePicture"), ("take a photo", "TakePicture"), ("is the light on", "LightStatus"),
        ("what time is it", "Time"), ("hello there", "Greetings"), ("thank you", "Thanks"),
    ]

    @Test("Spoken home.json commands are heard and understood as the same words typed, at two speaking rates")
    func commandsRoundTrip() throws {
        let recognizer = try Self.recognizer()
        let understanding = SpeechUnderstanding(workspace: Self.workspace)
        var heard = 0
        var accepted = 0
        var wrongActions: [String] = []
        var total = 0
        for rate in [150, 190] {
            for (sentence, intent) in Self.commands {
                total += 1
                let command = understanding.understand(try recognizer.recognize(try Self.speech(sentence, rate: rate)))
                // Speech and text agree exactly for identical words.
                let typed = understanding.matcher.understand(command.transcript.text)
                #expect(typed.intents.first?.intent == command.intent?.intent && typed.entities == command.understanding.entities)
                if command.intent?.intent == intent { heard += 1 }
                if command.accepted && command.intent?.intent == intent { accepted += 1 }
                if command.accepted && command.intent?.intent != intent {
                    wrongActions.append("\(sentence) @\(rate) → \"\(command.transcript.text)\" \(command.intent?.intent ?? "-")")
                }
            }
        }
        // The words come through (measured 18/18). eSpeak NG's voice is far from the speakers the acoustic
        // model learnt from, so the phone-loop confidence rejects some correct transcripts (measured 12/18
        // accepted; real recordings fare better, see docs/speech.md); none may become a different command.
        #expect(heard * 10 >= total * 9, "\(heard)/\(total) heard as the right intent")
        #expect(accepted * 2 >= total, "\(accepted)/\(total) accepted")
        #expect(wrongActions.isEmpty, "\(wrongActions)")
    }

    /// A rate, not a count of a handful: eSpeak's audio for one text varies with what the process spoke
    /// before (its pitch flutter runs on across calls), and a few sentences sit near the rejection point, so
    /// one of them flips between runs. Measured over 5 different histories: 4 of 120 accepted (3%), and
    /// 2 of the first 8 once in CI, which an "at most 1 of 8" bound failed. Here 24 sentences at two rates
    /// keep the bound at one in eight while a single flip no longer decides the test. The rejection rate
    /// itself is measured in bench/ (issue 16 aims at ≤ 1% clean).
    @Test("Sentences from outside the assistant's domain are rejected, not acted on")
    func outOfDomainIsRejected() throws {
        let recognizer = try Self.recognizer()
        let understanding = SpeechUnderstanding(workspace: Self.workspace)
        let sentences = [
            "the quick brown fox jumps over the lazy dog", "I would like to book a flight to paris tomorrow",
            "my sister plays the violin in an orchestra", "how many kilometres is it to the nearest hospital",
            "please remind me to buy bread and cheese", "the stock market fell sharply this morning",
            "can you recommend a good italian restaurant", "what is the capital of australia",
            "the train to london leaves at half past nine", "we planted tomatoes and beans in the garden",
            "who won the football match last night", "my phone battery is almost empty",
            "the children are building a sandcastle on the beach", "read me the latest news about the election",
            "how do you say good night in spanish", "the dentist appointment was moved to friday",
            "send an email to my boss about the meeting", "there is a traffic jam on the motorway",
            "what is the square root of one hundred and forty four", "the cat is sleeping on the sofa",
            "order a large pizza with mushrooms", "my grandmother knits warm woollen socks",
            "play some jazz music in the living room", "when does the supermarket close on sunday",
        ]
        var accepted: [String] = []
        var total = 0
        for rate in [160, 190] {
            for sentence in sentences {
                let command = understanding.understand(try recognizer.recognize(try Self.speech(sentence, rate: rate)))
                total += 1
                if command.accepted {
                    accepted.append("\(sentence) at \(rate) → \"\(command.transcript.text)\" \(command.intent?.intent ?? "-")")
                }
            }
        }
        print("out of domain: \(accepted.count)/\(total) accepted \(accepted)")
        #expect(accepted.count * 8 <= total, "accepted \(accepted.count)/\(total): \(accepted)")
    }

    @Test("A command captured through alsa-lib (the file plugin as microphone) is endpointed and understood")
    func throughALSA() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hark-roundtrip-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        // What a microphone would hear: a moment of quiet, the command, then quiet long enough to end it.
        var stream = PCMBuffer(format: .speech, samples: [Int16](repeating: 0, count: 8_000))
        stream.append(try Self.speech("turn off the light"))
        stream.append(PCMBuffer(format: .speech, samples: [Int16](repeating: 0, count: 32_000)))
        let raw = dir.appendingPathComponent("mic.raw")
        try AudioFile.write(stream, to: raw.path)
        let config = dir.appendingPathComponent("asoundrc")
        try """
            pcm.hark_test_mic { type file slave.pcm { type null } file "/dev/null" infile "\(raw.path)" format "raw" }
            """.write(to: config, atomically: true, encoding: .utf8)

        let capture = try ALSACapture(device: "hark_test_mic", format: .speech, configFile: config.path)
        let listener = UtteranceListener(recognizer: try Self.recognizer(), endpointer: try Endpointer())
        let transcript = try #require(try listener.listen(to: capture))
        #expect(listener.endReason == .trailingSilence)
        let command = SpeechUnderstanding(workspace: Self.workspace).understand(transcript)
        #expect(command.accepted)
        #expect(command.intent?.intent == "OffLight", "heard \"\(transcript.text)\"")
    }

    @Test("Streaming through the endpointer hears what decoding the whole clip hears")
    func streamingMatchesWholeClip() throws {
        var stream = PCMBuffer(format: .speech, samples: [Int16](repeating: 0, count: 4_000))
        stream.append(try Self.speech("what time is it"))
        stream.append(PCMBuffer(format: .speech, samples: [Int16](repeating: 0, count: 20_000)))
        let listener = UtteranceListener(recognizer: try Self.recognizer(), endpointer: try Endpointer())
        let streamed = try #require(try listener.listen(to: BufferedAudioSource(stream), blockFrames: 320))
        #expect(streamed.text == "what time is it")
    }

    @Test("A workspace word no dictionary knows is pronounced by eSpeak NG and can be heard")
    func unknownWordIsPronounced() throws {
        let workspace = try Workspace.parse(
            #"{"intents":[{"intent":"wake","examples":[{"text":"wake up zorbulax"},{"text":"good night zorbulax"}]}]}"#)
        let recognizer = try SpeechRecognizer(workspace: workspace, pronunciations: try Self.pronunciations())
        #expect(recognizer.guessedWords == ["zorbulax"])
        let transcript = try recognizer.recognize(try Self.speech("wake up zorbulax"))
        #expect(transcript.text == "wake up zorbulax")
    }
}
