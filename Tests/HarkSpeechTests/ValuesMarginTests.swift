import Foundation
import HarkCore
import HarkTestSupport
import Testing

@testable import HarkSpeech

/// The margin over the words of a command's values (`Transcript.fit(ofWordsIn:)`), and the rule that turns a command
/// away when those words fit the sound poorly (`RecognitionOptions.valuesMarginPoint`, on by default).
@Suite("The values' margin")
struct ValuesMarginTests {
    /// "switch off the lamp": switch 0–0.3 s (-2), off 0.3–0.5 s (-1), the 0.5–0.6 s (-4), lamp 0.6–1.2 s (`lamp`).
    static func switchOff(lamp: Double?, point: Double? = RecognitionOptions.standardValuesMarginPoint) -> Transcript {
        let words = [
            Transcript.Word(text: "switch", start: 0, end: 0.3, margin: -2), Transcript.Word(text: "off", start: 0.3, end: 0.5, margin: -1),
            Transcript.Word(text: "the", start: 0.5, end: 0.6, margin: -4), Transcript.Word(text: "lamp", start: 0.6, end: 1.2, margin: lamp),
        ]
        var t = Transcript(text: "switch off the lamp", words: words, acousticConfidence: 0.8, acousticMargin: -2.2, audioSeconds: 1.6,
                           decodeMilliseconds: 10)
        t.valuesMarginPoint = point
        return t
    }

    /// Margins are averages of durations' products: equal to a few ulps.
    static func close(_ x: Double?, _ y: Double) -> Bool { x.map { abs($0 - y) < 1e-9 } ?? false }

    @Test("The margin over the words inside the spans, weighted by their durations")
    func marginOverWords() {
        let t = Self.switchOff(lamp: -6)
        // Offsets: switch 0..<6, off 7..<10, the 11..<14, lamp 15..<19.
        #expect(Self.close(t.fit(ofWordsIn: [15..<19])?.margin, -6) && Self.close(t.fit(ofWordsIn: [15..<19])?.seconds, 0.6))
        #expect(Self.close(t.fit(ofWordsIn: [7..<14])?.margin, (-1 * 0.2 - 4 * 0.1) / 0.3))
        #expect(Self.close(t.fit(ofWordsIn: [0..<6, 15..<19])?.margin, (-2 * 0.3 - 6 * 0.6) / 0.9))
        #expect(Self.close(t.fit(ofWordsIn: [0..<6, 15..<19])?.seconds, 0.9))
        // A span that covers no whole word, no span, a word without a margin, words that do not spell the text: no margin.
        #expect(t.fit(ofWordsIn: [8..<12]) == nil)
        #expect(t.fit(ofWordsIn: []) == nil)
        #expect(Self.switchOff(lamp: nil).fit(ofWordsIn: [15..<19]) == nil)
        var misspelt = t
        misspelt.text = "switch off the light"
        #expect(misspelt.fit(ofWordsIn: [15..<20]) == nil)
        // Offsets count Unicode scalars, as `EntityMatch` does.
        let cafe = Transcript(text: "café noir", words: [Transcript.Word(text: "café", start: 0, end: 0.4, margin: -1),
                                                        Transcript.Word(text: "noir", start: 0.4, end: 0.8, margin: -3)],
                              acousticConfidence: 0.8, acousticMargin: -2, audioSeconds: 1, decodeMilliseconds: 1)
        #expect(Self.close(cafe.fit(ofWordsIn: [5..<9])?.margin, -3))
    }

    @Test("A command whose values fit poorly is turned away, and says why; values too short to judge are not")
    func understandingJudgesTheValues() throws {
        let understanding = SpeechUnderstanding(workspace: try Workspace.load(from: RecognitionFixtures.home))
        let poor = understanding.understand(Self.switchOff(lamp: -6))
        #expect(poor.intent?.intent == "OffLight" && Self.close(poor.valuesMargin, -6) && poor.valueWords == ["lamp"])
        #expect(!poor.accepted && poor.valuesFitPoorly)
        #expect(poor.rejectionReason(acousticThreshold: 0.5, intentThreshold: 0.2) == "the values fit the sound poorly: margin -6 < -4.25 over “lamp”")

        // Reasons give numbers to three decimals, whole ones without them, and never trap on a number that is not one.
        #expect(SpokenCommand.format(-6.000000000000001) == "-6" && SpokenCommand.format(0.3125) == "0.313")
        #expect(SpokenCommand.format(-4.25) == "-4.25" && SpokenCommand.format(.nan) == "nan" && SpokenCommand.format(-.infinity) == "-inf")

        let fitting = understanding.understand(Self.switchOff(lamp: -3))
        #expect(fitting.accepted && !fitting.valuesFitPoorly && Self.close(fitting.valuesMargin, -3))
        #expect(fitting.rejectionReason(acousticThreshold: 0.5, intentThreshold: 0.2) == "")

        // Off: the margin is reported, the decision is the two confidences'.
        let unjudged = understanding.understand(Self.switchOff(lamp: -6, point: nil))
        #expect(unjudged.accepted && Self.close(unjudged.valuesMargin, -6))
        // Values shorter than the minimum are not judged: over one short word the margin says as much about the voice.
        var short = Self.switchOff(lamp: -6)
        short.words[3].end = 0.9
        let brief = understanding.understand(short)
        #expect(brief.accepted && Self.close(brief.valuesSeconds, 0.3) && Self.close(brief.valuesMargin, -6))
        short.valuesMinimumSeconds = 0.25
        #expect(!understanding.understand(short).accepted)

        // A command the confidences turn away keeps its own reason.
        var unsure = Self.switchOff(lamp: -6)
        unsure.acousticConfidence = 0.1
        let rejected = understanding.understand(unsure)
        #expect(!rejected.accepted && !rejected.valuesFitPoorly)
        #expect(rejected.rejectionReason(acousticThreshold: 0.5, intentThreshold: 0.2) == "acoustic confidence 0.1 < 0.5")

        // A command without values has no values' margin; an intent that takes free words (DropIn's room may be one the
        // user made) is not judged on its values.
        let time = Transcript(text: "what time is it", words: ["what", "time", "is", "it"].enumerated().map {
            Transcript.Word(text: $1, start: Double($0) * 0.2, end: Double($0 + 1) * 0.2, margin: -8)
        }, acousticConfidence: 0.8, acousticMargin: -2, audioSeconds: 1, decodeMilliseconds: 1)
        var timed = time
        timed.valuesMarginPoint = RecognitionOptions.standardValuesMarginPoint
        let asked = understanding.understand(timed)
        #expect(asked.accepted && asked.valuesMargin == nil && asked.intent?.intent == "Time")
        #expect(understanding.freeTextIntents.contains("DropIn"))
        var dropIn = Transcript(text: "drop in on the kitchen", words: ["drop", "in", "on", "the", "kitchen"].enumerated().map {
            Transcript.Word(text: $1, start: Double($0) * 0.2, end: Double($0 + 1) * 0.2, margin: -8)
        }, acousticConfidence: 0.8, acousticMargin: -2, audioSeconds: 1.2, decodeMilliseconds: 1)
        dropIn.valuesMarginPoint = RecognitionOptions.standardValuesMarginPoint
        let room = understanding.understand(dropIn)
        #expect(room.intent?.intent == "DropIn" && room.accepted && room.valuesMargin == nil)
    }

    @Test("Spoken: a request that only opens like an order is turned away; orders are not; a single short value is not judged")
    func spokenNearCommand() throws {
        let barista = try Workspace.load(from: RecognitionFixtures.packageRoot.appendingPathComponent("Intents/barista.json"))
        let orders = SpeechUnderstanding(workspace: barista)
        let baristaRecognizer = try SpeechRecognizer(workspace: barista)
        #expect(RecognitionOptions().valuesMarginPoint == RecognitionOptions.standardValuesMarginPoint, "on by default")

        // eSpeak NG's "I'd like a quiet room" is heard as "i'd like a mocha with cream": the opening fits, the values
        // (more than half a second of them) do not.
        let quietRoom = try FreshSpeech.eSpeak("I'd like a quiet room")
        let room = orders.understand(try baristaRecognizer.recognize(quietRoom))
        #expect(room.transcript.valuesMarginPoint == RecognitionOptions.standardValuesMarginPoint)
        #expect(!room.accepted && room.valuesFitPoorly, "\(room.transcript.text): \(room.valuesMargin ?? 0) over \(room.valuesSeconds ?? 0) s")
        #expect(room.acousticConfidence >= SpeechUnderstanding.defaultAcousticThreshold && room.intent?.intent == "orderDrink",
                "the margins alone would have taken the order: \(room.acousticConfidence)")
        let unjudged = try SpeechRecognizer(workspace: barista, options: RecognitionOptions(valuesMarginPoint: nil))
        #expect(orders.understand(try unjudged.recognize(quietRoom)).accepted)

        let order = orders.understand(try baristaRecognizer.recognize(try FreshSpeech.eSpeak("get me a medium cappuccino")))
        #expect(order.accepted && (order.valuesSeconds ?? 0) >= RecognitionOptions.defaultValuesMinimumSeconds,
                "\(order.transcript.text): \(order.valuesMargin ?? 0) over \(order.valuesSeconds ?? 0) s")

        // eSpeak NG's "switch off the oven" is heard as "switch off the lamp": one short value, not judged by default,
        // turned away when even a third of a second is enough to judge. (The second reading is off here, to see the
        // values' margin alone: by default the reading, which does not hear the lamp, stops it, below.)
        let home = try Workspace.load(from: RecognitionFixtures.home)
        let understanding = SpeechUnderstanding(workspace: home)
        let oven = try FreshSpeech.eSpeak("switch off the oven")
        let unread = RecognitionOptions(secondReading: .off)
        let usual = understanding.understand(try SpeechRecognizer(workspace: home, options: unread, pronunciations: HomeWords()).recognize(oven))
        #expect(usual.accepted && usual.intent?.intent == "OffLight" && (usual.valuesSeconds ?? 1) < RecognitionOptions.defaultValuesMinimumSeconds,
                "\(usual.transcript.text): \(usual.valuesMargin ?? 0) over \(usual.valuesSeconds ?? 0) s")
        var strictOptions = unread
        strictOptions.valuesMinimumSeconds = 0.1
        let strict = try SpeechRecognizer(workspace: home, options: strictOptions, pronunciations: HomeWords())
        let turnedAway = understanding.understand(try strict.recognize(oven))
        #expect(!turnedAway.accepted && turnedAway.valuesFitPoorly, "\(turnedAway.transcript.text): \(turnedAway.valuesMargin ?? 0)")
        // By default the second reading means the same intent but names no lamp (SecondReading.valuesMissing): not run.
        let checked = understanding.understand(try SpeechRecognizer(workspace: home, pronunciations: HomeWords()).recognize(oven))
        #expect(!checked.accepted && checked.readsOtherwise && checked.valuesUnread == ["@device:light"],
                "\(checked.transcript.text) / \(checked.transcript.secondReading ?? "-")")
    }
}
