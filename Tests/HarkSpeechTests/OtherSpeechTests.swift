import Foundation
import HarkAudio
import HarkCore
import HarkTestSupport
import Testing

@testable import HarkSpeech

/// The grammar's branch for speech that is none of the workspace's sentences (`OtherSpeech`).
@Suite("Speech outside the grammar")
struct OtherSpeechTests {
    /// The tests' tutorial-size workspace: four intents of five to seven examples (Tests/HarkCoreTests/Data).
    static let tutorial = RecognitionFixtures.packageRoot.appendingPathComponent("Tests/HarkCoreTests/Data/tutorial.json")

    /// Real read speech from a novel (LibriVox, public domain): nothing a light switch or a camera is asked.
    static func novel(_ number: String) throws -> PCMBuffer {
        try RecognitionFixtures.wav(RecognitionFixtures.recordedSpeech.appendingPathComponent("sense_and_sensibility_01_austen_64kb-\(number).wav"))
    }

    @Test("The branch is one more state, from the grammar's start to its end, looping over every phone")
    func branchInTheAutomaton() throws {
        let grammar = SpeechGrammar(workspace: RecognizerTests.robot)
        let automaton = try WordAutomaton(grammar: grammar)
        let plain = automaton.fsg(name: "grammar")
        let branched = automaton.fsg(name: "grammar", loop: OtherSpeech(phoneProbability: 0.39).loop)
        func number(_ key: String, _ text: String) -> Int? {
            text.split(separator: "\n").first { $0.hasPrefix(key + " ") }.flatMap { Int($0.split(separator: " ")[1]) }
        }
        let states = try #require(number("NUM_STATES", plain))
        #expect(number("NUM_STATES", branched) == states + 1)
        let start = try #require(number("START_STATE", plain))
        let final = try #require(number("FINAL_STATE", plain))
        let added = branched.split(separator: "\n").filter { $0.hasPrefix("TRANSITION") }.count
            - plain.split(separator: "\n").filter { $0.hasPrefix("TRANSITION") }.count
        #expect(added == OtherSpeech.phones.count + 2)
        #expect(branched.contains("TRANSITION \(start) \(states) 1.0\n"))
        #expect(branched.contains("TRANSITION \(states) \(final) 1.0\n"))
        // Each phone gets the probability shared among them all: 0.39 / 39.
        #expect(branched.contains("TRANSITION \(states) \(states) 0.01 [other-aa]\n"))
        #expect(branched.hasSuffix("FSG_END\n") || branched.hasSuffix("FSG_END"))
        #expect(OtherSpeech.dictionaryText.split(separator: "\n").count == OtherSpeech.phones.count)
        #expect(SpeechRecognizer.spokenWord("[other-aa]") == nil, "a branch word must never reach a transcript")
        // The sentences' transitions are the same with the branch as without it.
        let sentences = plain.split(separator: "\n").filter { $0.hasPrefix("TRANSITION") }
        #expect(sentences.allSatisfy { branched.contains($0 + "\n") })
        #expect(OtherSpeech.dictionaryText.hasPrefix("[other-aa] AA\n"))
    }

    @Test("Read speech takes the branch on a tutorial-size workspace, where without it a command is decoded")
    func readSpeechIsOther() throws {
        let workspace = try Workspace.load(from: Self.tutorial)
        let plain = try SpeechRecognizer(workspace: workspace, options: RecognitionOptions(otherSpeech: nil))
        let branched = try SpeechRecognizer(workspace: workspace, options: RecognitionOptions(otherSpeech: .standard))
        for number in ["0880", "0930"] {
            let audio = try Self.novel(number)
            let forced = try plain.recognize(audio)
            #expect(!forced.text.isEmpty && !forced.otherSpeech, "without the branch the grammar forces a sentence on \(number)")
            let heard = try branched.recognize(audio)
            #expect(heard.otherSpeech, "\(number): \(heard.text)")
            #expect(heard.text.isEmpty && heard.words.isEmpty && heard.acousticConfidence == 0 && heard.acousticMargin == nil)
        }
    }

    @Test("A command of the workspace does not take the branch: synthetic and real speech")
    func commandsDoNotTakeIt() throws {
        let tutorial = try SpeechRecognizer(workspace: try Workspace.load(from: Self.tutorial), options: RecognitionOptions(otherSpeech: .standard))
        let light = try tutorial.recognize(try FreshSpeech.eSpeak("turn on the light"))
        #expect(!light.otherSpeech && light.text == "turn on the light" && light.acousticConfidence > 0.5)

        let robot = try SpeechRecognizer(workspace: RecognizerTests.robot, options: RecognitionOptions(otherSpeech: .standard))
        let real = try robot.recognize(try RecognitionFixtures.raw(RecognitionFixtures.recordedSpeech.appendingPathComponent("goforward.raw")))
        #expect(!real.otherSpeech && real.text == "go forward ten meters")
    }

    @Test("A value's place none of the values fits (an experiment, off by default): a near-command takes the loop and is not run; a command does not")
    func otherValueLoop() throws {
        #expect(RecognitionOptions().otherValue == nil, "off by default: real voices' values take it too (docs/speech.md)")
        let home = try Workspace.load(from: RecognitionFixtures.home)
        let understanding = SpeechUnderstanding(workspace: home)
        let options = RecognitionOptions(otherValue: OtherValue(phoneProbability: 0.01))
        let recognizer = try SpeechRecognizer(workspace: home, options: options, pronunciations: HomeWords())
        // eSpeak NG's "is the stove on": by default heard as a light's or a camera's status; here the device's place is
        // free phones.
        let stove = understanding.understand(try recognizer.recognize(try FreshSpeech.eSpeak("is the stove on")))
        #expect(stove.transcript.otherValue && !stove.accepted && !stove.decidedByReading, "\(stove.transcript.text)")
        #expect(stove.rejectionReason(acousticThreshold: 0.5, intentThreshold: 0.2) == OtherValue.reason)
        #expect(!stove.transcript.text.contains("["), "the loop's words are not spoken words: \(stove.transcript.text)")
        let lamp = understanding.understand(try recognizer.recognize(try FreshSpeech.eSpeak("switch off the lamp")))
        #expect(!lamp.transcript.otherValue && lamp.accepted && lamp.intent?.intent == "OffLight", "\(lamp.transcript.text)")
        #expect(lamp.understanding.entities.contains { $0.entity == "device" && $0.value == "light" })
    }
}
