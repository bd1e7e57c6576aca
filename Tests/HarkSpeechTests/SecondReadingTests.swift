import Foundation
import HarkAudio
import HarkCore
import HarkTestSupport
import Testing

@testable import HarkSpeech

/// The second reading of a clean utterance with the workspace's words in any order (`SecondReading`): the understanding's
/// check that both readings mean the same command, and the reading that answers when it is sure (`SecondReading.Use.decide`).
@Suite("A second reading")
struct SecondReadingTests {
    static func transcript(_ text: String, reading: String?) -> Transcript {
        var t = Transcript(text: text, words: [], acousticConfidence: 0.9, acousticMargin: -1.5, audioSeconds: 1.5, decodeMilliseconds: 10)
        t.secondReading = reading
        return t
    }

    @Test("A command runs only when the second reading means the same intent")
    func understandingChecksTheReading() throws {
        let understanding = SpeechUnderstanding(workspace: try Workspace.load(from: RecognitionFixtures.home))
        let same = understanding.understand(Self.transcript("turn on the light", reading: "turn the light on"))
        #expect(same.accepted && !same.readsOtherwise && same.intent?.intent == "OnLight" && same.secondReadingIntent == "OnLight")

        let other = understanding.understand(Self.transcript("turn on the light", reading: "turn off the light"))
        #expect(!other.accepted && other.readsOtherwise)
        #expect(other.intent?.intent == "OnLight" && other.secondReadingIntent == "OffLight")
        #expect(SecondReading.reason("turn off the light", intent: other.secondReadingIntent) == "the words could also be “turn off the light”, #OffLight")

        // Words that mean no command, or nothing read at all, are no confirmation either.
        let nothing = understanding.understand(Self.transcript("turn on the light", reading: ""))
        #expect(!nothing.accepted && nothing.readsOtherwise && nothing.secondReadingIntent == nil)
        #expect(SecondReading.reason("", intent: nil) == "the words could also be “”, no command")

        // Without a second reading (noisy speech, streaming, off) the two confidences decide alone.
        let unread = understanding.understand(Self.transcript("turn on the light", reading: nil))
        #expect(unread.accepted && !unread.readsOtherwise && unread.secondReading == nil)

        // A command the confidences already turn away is not "read otherwise": its own reason stands.
        var unsure = Self.transcript("turn on the light", reading: "turn off the light")
        unsure.acousticConfidence = 0.1
        let rejected = understanding.understand(unsure)
        #expect(!rejected.accepted && !rejected.readsOtherwise)
    }

    @Test("A reading sure of its words and their intent answers; one that is not only checks")
    func understandingLetsTheReadingDecide() throws {
        let understanding = SpeechUnderstanding(workspace: try Workspace.load(from: RecognitionFixtures.home))
        func sure(_ text: String, reading: String, confidence: Double = 0.8, fluency: Double = -1.0, between: Double = -0.5) -> Transcript {
            var t = Self.transcript(text, reading: reading)
            t.secondReadingConfidence = confidence
            t.secondReadingFluency = fluency
            t.secondReadingMargin = between
            return t
        }
        // The grammar's sentence means another intent: the reading's runs, with its words and entities.
        let overruled = understanding.understand(sure("turn on the light", reading: "turn off the light"))
        #expect(overruled.accepted && overruled.decidedByReading && !overruled.readsOtherwise)
        #expect(overruled.intent?.intent == "OffLight" && overruled.text == "turn off the light" && overruled.acousticConfidence == 0.8)
        #expect(overruled.understanding.entities.contains { $0.entity == "device" })

        // The grammar's sentence was turned away (its margin failed): the reading's passes on its own.
        var unsure = sure("turn on the light", reading: "what time is it")
        unsure.acousticConfidence = 0.1
        let rescued = understanding.understand(unsure)
        #expect(rescued.accepted && rescued.decidedByReading && rescued.intent?.intent == "Time")
        // ... but only when its own words fit clearly well (SecondReading.rescueConfidence), not merely passably.
        var passable = sure("turn on the light", reading: "what time is it", confidence: 0.6)
        passable.acousticConfidence = 0.1
        let stillUnsure = understanding.understand(passable)
        #expect(!stillUnsure.accepted && !stillUnsure.decidedByReading && !stillUnsure.readsOtherwise)

        // Both mean the same: the grammar's sentence stands (its words, its entities).
        let same = understanding.understand(sure("turn on the light", reading: "turn the light on"))
        #expect(same.accepted && !same.decidedByReading && same.text == "turn on the light")

        // Not sure enough, each way: the reading only checks, and the grammar's sentence is not run.
        for doubtful in [sure("turn on the light", reading: "turn off the light", confidence: 0.3),
                         sure("turn on the light", reading: "turn off the light", between: -0.1),  // hardly a better fit
                         sure("turn on the light", reading: "turn off the light", fluency: -2.5),
                         sure("turn on the light", reading: "lights out please")] {  // #OffLight at 0.89
            let checked = understanding.understand(doubtful)
            #expect(!checked.decidedByReading && checked.intent?.intent == "OnLight", "\(checked.text)")
            #expect(checked.accepted == false || checked.secondReadingIntent == "OnLight", "\(checked.text)")
        }
        // No confidence (the reading may not decide: checking only, the grammar heard other speech).
        let checking = understanding.understand(Self.transcript("turn on the light", reading: "turn off the light"))
        #expect(!checking.decidedByReading && !checking.accepted && checking.readsOtherwise)

        // Moderate noise: the reading only overrules. A sure reading answers in place of a sentence the grammar accepted,
        // as in clean speech; it does not answer for one turned away, and one that is not sure does not stop the grammar's.
        func noisy(_ t: Transcript) -> Transcript {
            var t = t
            t.moderateDecoding = true
            return t
        }
        let decidedInNoise = understanding.understand(noisy(sure("turn on the light", reading: "turn off the light")))
        #expect(decidedInNoise.accepted && decidedInNoise.decidedByReading && decidedInNoise.intent?.intent == "OffLight")
        var turnedAwayInNoise = noisy(sure("turn on the light", reading: "what time is it", confidence: 0.95))
        turnedAwayInNoise.acousticConfidence = 0.1
        let notRescued = understanding.understand(turnedAwayInNoise)
        #expect(!notRescued.accepted && !notRescued.decidedByReading && !notRescued.readsOtherwise)
        for unsure in [sure("turn on the light", reading: "turn off the light", confidence: 0.3),
                       sure("turn on the light", reading: "me", fluency: -1.8)] {  // no command
            let kept = understanding.understand(noisy(unsure))
            #expect(kept.accepted && !kept.readsOtherwise && !kept.decidedByReading && kept.intent?.intent == "OnLight", "\(unsure.secondReading ?? "-")")
            // The same reading in clean speech stops it.
            let clean = understanding.understand(unsure)
            #expect(!clean.accepted && clean.readsOtherwise, "\(unsure.secondReading ?? "-")")
        }
        // A reading that only checks (no confidence: `.check`) stops it in moderate noise too.
        let stopped = understanding.understand(noisy(Self.transcript("turn on the light", reading: "turn off the light")))
        #expect(!stopped.accepted && stopped.readsOtherwise)
    }

    @Test("A reading of the same intent that does not name the grammar's values stops it, or answers with its own when sure")
    func understandingChecksTheValues() throws {
        let understanding = SpeechUnderstanding(workspace: try Workspace.load(from: RecognitionFixtures.home))
        // "is the oven still on", heard by the grammar as the nearest sentence it has and read by the free search without
        // the light: both mean #LightStatus, but nothing confirms which device was asked about.
        let unnamed = understanding.understand(Self.transcript("is the light still on", reading: "is the you on"))
        #expect(!unnamed.accepted && unnamed.readsOtherwise && unnamed.secondReadingIntent == "LightStatus")
        #expect(unnamed.valuesUnread == ["@device:light"])
        #expect(unnamed.rejectionReason(acousticThreshold: 0.5, intentThreshold: 0.2)
                == "the words could also be “is the you on”, #LightStatus without @device:light")

        // The same values in other words (a synonym) confirm them; extra values in the reading take nothing away.
        let synonym = understanding.understand(Self.transcript("turn on the light", reading: "turn the lamp on"))
        #expect(synonym.accepted && synonym.valuesUnread.isEmpty)
        let more = understanding.understand(Self.transcript("turn on the light", reading: "turn on the light and the camera"))
        #expect(more.accepted && more.valuesUnread.isEmpty)
        // A sentence without values has nothing to confirm.
        let plain = understanding.understand(Self.transcript("what time is it", reading: "what is the time"))
        #expect(plain.accepted && plain.valuesUnread.isEmpty)

        // Another value of the same entity, read surely: the reading answers with its own ("please turn the lights on"
        // heard by the grammar as "picture camera on").
        var sure = Self.transcript("picture camera on", reading: "please turn the lights on")
        sure.secondReadingConfidence = 0.8
        sure.secondReadingFluency = -1.0
        sure.secondReadingMargin = -1.2
        let answered = understanding.understand(sure)
        #expect(answered.accepted && answered.decidedByReading && answered.intent?.intent == "OnLight")
        #expect(answered.understanding.entities.map(\.value) == ["light"] && answered.valuesUnread == ["@device:camera"])
        // Sure, but naming no device at all: no command of its own to answer with, so it only checks.
        var noDevice = Self.transcript("is the light still on", reading: "is the you on")
        noDevice.secondReadingConfidence = 0.9
        noDevice.secondReadingFluency = -1.0
        noDevice.secondReadingMargin = -1.2
        let unanswered = understanding.understand(noDevice)
        #expect(!unanswered.accepted && !unanswered.decidedByReading && unanswered.readsOtherwise)
        #expect(!SecondReading.namesOtherValues(understanding.matcher.understand("is the you on"), for: ["@device:light"]))
        #expect(SecondReading.namesOtherValues(understanding.matcher.understand("is the camera on"), for: ["@device:light"]))
        #expect(!SecondReading.namesOtherValues(understanding.matcher.understand("is the camera on"), for: []))
        // Not sure (hardly a better fit): it only checks, and the grammar's camera is not switched on.
        sure.secondReadingMargin = -0.1
        let checked = understanding.understand(sure)
        #expect(!checked.accepted && !checked.decidedByReading && checked.readsOtherwise)

        // Moderate noise: the reading only overrules. A sure one answers with its values, as in clean speech; one that is
        // not sure does not stop the grammar's.
        sure.moderateDecoding = true
        let kept = understanding.understand(sure)
        #expect(kept.accepted && !kept.readsOtherwise && !kept.decidedByReading && kept.valuesUnread == ["@device:camera"])
        #expect(kept.understanding.entities.map(\.value) == ["camera"])
        sure.secondReadingMargin = -1.2
        let answeredInNoise = understanding.understand(sure)
        #expect(answeredInNoise.accepted && answeredInNoise.decidedByReading && answeredInNoise.understanding.entities.map(\.value) == ["light"])
        // System entities are not compared: a reading that wanders over a number is no evidence against the grammar's.
        #expect(SecondReading.valuesMissing(from: understanding.matcher.understand("what time is it"),
                                            heard: understanding.matcher.understand("what time is it at seven")).isEmpty)
    }

    @Test("A paraphrase the grammar hears as another command is not run; a command of the workspace is")
    func spokenParaphrase() throws {
        let workspace = try Workspace.load(from: RecognitionFixtures.home)
        let understanding = SpeechUnderstanding(workspace: workspace)
        // Without the courtesy words: with them "lights out please" is a sentence of the grammar ("lights out" and a
        // closing "please"), and the grammar alone hears it right (RecognizerTests.courtesyWords).
        let reading = try SpeechRecognizer(workspace: workspace, options: RecognitionOptions(secondReading: .check, courtesyWords: false),
                                           pronunciations: HomeWords())
        let grammarOnly = try SpeechRecognizer(workspace: workspace, options: RecognitionOptions(secondReading: .off, courtesyWords: false),
                                               pronunciations: HomeWords())

        // "lights out please" is no sentence of home.json; the nearest in sound is "lights on please".
        let paraphrase = try FreshSpeech.eSpeak("lights out please")
        let alone = understanding.understand(try grammarOnly.recognize(paraphrase))
        #expect(alone.transcript.secondReading == nil, "off")
        #expect(alone.accepted && alone.intent?.intent == "OnLight", "the grammar alone runs the wrong command: \(alone.transcript.text)")
        let checked = understanding.understand(try reading.recognize(paraphrase))
        #expect(!checked.accepted && checked.readsOtherwise, "\(checked.transcript.text) / \(checked.transcript.secondReading ?? "-")")
        #expect(checked.secondReadingIntent == "OffLight", "the second reading hears what was said: \(checked.transcript.secondReading ?? "-")")

        // A sentence of the workspace reads the same both ways and runs.
        let command = understanding.understand(try reading.recognize(try FreshSpeech.eSpeak("shut off the lamp")))
        #expect(command.accepted && command.intent?.intent == "OffLight" && command.secondReadingIntent == "OffLight",
                "\(command.transcript.text) / \(command.transcript.secondReading ?? "-"): acoustic \(command.acousticConfidence), values \(command.valuesMargin ?? 0) over \(command.valuesSeconds ?? 0) s")
        #expect(command.transcript.secondReading != nil)
    }

    @Test("By default a reading sure of a paraphrase the grammar mishears runs it, with the reading's words")
    func spokenParaphraseDecided() throws {
        // The tests' tutorial workspace: "please turn the lamp on" is none of its sentences; the grammar's nearest
        // ("please lamp on") does not pass, while the reading hears the words as said.
        let workspace = try Workspace.load(from: OtherSpeechTests.tutorial)
        let understanding = SpeechUnderstanding(workspace: workspace)
        let recognizer = try SpeechRecognizer(workspace: workspace)
        let command = understanding.understand(try recognizer.recognize(try FreshSpeech.eSpeak("please turn the lamp on", voice: "en-us+m3")))
        let t = command.transcript
        let detail = "\(t.text) / \(t.secondReading ?? "-"): acoustic \(t.acousticConfidence), reading \(t.secondReadingConfidence ?? -1), fluency \(t.secondReadingFluency ?? -99)"
        #expect(command.accepted && command.decidedByReading && command.intent?.intent == "OnLight", "\(detail)")
        #expect(command.text == t.secondReading && command.text != t.text, "\(detail)")
        #expect((t.secondReadingFluency ?? -99) >= SecondReading.fluencyPoint && (t.secondReadingConfidence ?? 0) >= SecondReading.rescueConfidence, "\(detail)")
        // The same audio with the reading only checking: the grammar's sentence is not run, and nothing else is.
        let checking = try SpeechRecognizer(workspace: workspace, options: RecognitionOptions(secondReading: .check))
        let checked = understanding.understand(try checking.recognize(try FreshSpeech.eSpeak("please turn the lamp on", voice: "en-us+m3")))
        #expect(!checked.accepted && !checked.decidedByReading, "\(checked.transcript.text) / \(checked.transcript.secondReading ?? "-")")
    }

    @Test("No second reading where it cannot disagree or does not run (one intent, noisy speech, streaming); one in moderate noise")
    func whereItDoesNotRun() throws {
        let audio = try FreshSpeech.eSpeak("stop")
        let oneIntent = Workspace(name: "one", intents: [Intent(name: "stop", examples: [IntentExample(text: "stop"), IntentExample(text: "halt now")])])
        let single = try SpeechRecognizer(workspace: oneIntent, options: RecognitionOptions(secondReading: .check))
        #expect(single.readingDecoder == nil)
        #expect(try single.recognize(audio).secondReading == nil)

        let robot = try SpeechRecognizer(workspace: RecognizerTests.robot, options: RecognitionOptions(secondReading: .check))
        #expect(robot.readingDecoder != nil)
        #expect(try robot.recognize(audio).secondReading == "stop")
        let streaming = try SpeechRecognizer(workspace: RecognizerTests.robot, options: RecognitionOptions(cepstralMean: .defaultStreaming, secondReading: .check))
        #expect(streaming.readingDecoder == nil)

        // Speech in noise: white noise (a fixed generator) under the command. About as loud as the voice, it goes to the
        // noisy-speech decoder, which has no second reading; far quieter, to the moderate-noise decoder, which has one.
        let voice = try FreshSpeech.eSpeak("turn on the light")
        var energy = 0.0
        for sample in voice.samples { energy += Double(sample) * Double(sample) }
        let level = (energy / Double(voice.samples.count)).squareRoot()
        func mixed(noise: Double) -> PCMBuffer {
            let quiet = [Int16](repeating: 0, count: 8_000)
            var samples: [Int16] = []
            var seed: UInt64 = 7
            for sample in quiet + voice.samples + quiet {
                seed = seed &* 6364136223846793005 &+ 1442695040888963407
                let uniform: Double = Double(seed >> 11) / 9007199254740992.0 * 2 - 1
                let value: Double = Double(sample) + uniform * level * noise
                samples.append(Int16(clamping: Int(value)))
            }
            return PCMBuffer(format: .speech, samples: samples)
        }
        let home = try SpeechRecognizer(workspace: try Workspace.load(from: RecognitionFixtures.home), model: ModerateDecodingTests.shipped,
                                        options: RecognitionOptions(secondReading: .check), pronunciations: HomeWords())
        #expect(home.moderateReadingDecoder != nil)
        let loud = try home.recognize(mixed(noise: 1.7))
        #expect(loud.noisyDecoding, "SNR \(loud.signalToNoise ?? Double.nan)")
        #expect(loud.secondReading == nil)
        let mild = try home.recognize(mixed(noise: 0.04))
        #expect(mild.moderateDecoding, "SNR \(mild.signalToNoise ?? Double.nan)")
        #expect(mild.secondReading != nil && mild.text == "turn on the light", "\(mild.text) / \(mild.secondReading ?? "-")")
        // Only checking, the reading has no confidence of its own (it may not answer).
        #expect(mild.secondReadingConfidence == nil)
        // The reading that decides (the default) reads moderate noise too, through the moderate-noise calibration.
        let deciding = try SpeechRecognizer(workspace: try Workspace.load(from: RecognitionFixtures.home), model: ModerateDecodingTests.shipped,
                                            pronunciations: HomeWords())
        #expect(deciding.readingDecoder != nil && deciding.moderateReadingDecoder != nil)
        let decided = try deciding.recognize(mixed(noise: 0.04))
        #expect(decided.moderateDecoding && decided.secondReading != nil)
        if let margin = decided.acousticMargin, let between = decided.secondReadingMargin {
            let expected = RecognitionOptions().moderate?.confidence.confidence(margin: margin - between)
            #expect(decided.secondReadingConfidence == expected, "\(decided.secondReadingConfidence ?? -1) against \(expected ?? -1)")
        } else {
            Issue.record("no margins: \(decided.text) / \(decided.secondReading ?? "-")")
        }
        #expect(try deciding.recognize(mixed(noise: 1.7)).secondReading == nil)
    }
}
