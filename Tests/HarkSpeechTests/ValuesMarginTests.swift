import Foundation
import HarkCore
import Testing

@testable import HarkSpeech

/// The margin over the words of a command's values (`Transcript.margin(overWordsIn:)`), and the option that turns a
/// command away when those words fit the sound poorly (`RecognitionOptions.valuesMarginPoint`).
@Suite("The values' margin")
struct ValuesMarginTests {
    /// "switch off the lamp": switch 0–0.3 s (-2), off 0.3–0.5 s (-1), the 0.5–0.6 s (-4), lamp 0.6–1.0 s (`lamp`).
    static func switchOff(lamp: Double?, point: Double? = RecognitionOptions.standardValuesMarginPoint) -> Transcript {
        let words = [
            Transcript.Word(text: "switch", start: 0, end: 0.3, margin: -2), Transcript.Word(text: "off", start: 0.3, end: 0.5, margin: -1),
            Transcript.Word(text: "the", start: 0.5, end: 0.6, margin: -4), Transcript.Word(text: "lamp", start: 0.6, end: 1.0, margin: lamp),
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
        #expect(Self.close(t.margin(overWordsIn: [15..<19]), -6))
        #expect(Self.close(t.margin(overWordsIn: [7..<14]), (-1 * 0.2 - 4 * 0.1) / 0.3))
        #expect(Self.close(t.margin(overWordsIn: [0..<6, 15..<19]), (-2 * 0.3 - 6 * 0.4) / 0.7))
        // A span that covers no whole word, no span, a word without a margin, words that do not spell the text: no margin.
        #expect(t.margin(overWordsIn: [8..<12]) == nil)
        #expect(t.margin(overWordsIn: []) == nil)
        #expect(Self.switchOff(lamp: nil).margin(overWordsIn: [15..<19]) == nil)
        var misspelt = t
        misspelt.text = "switch off the light"
        #expect(misspelt.margin(overWordsIn: [15..<20]) == nil)
        // Offsets count Unicode scalars, as `EntityMatch` does.
        let cafe = Transcript(text: "café noir", words: [Transcript.Word(text: "café", start: 0, end: 0.4, margin: -1),
                                                        Transcript.Word(text: "noir", start: 0.4, end: 0.8, margin: -3)],
                              acousticConfidence: 0.8, acousticMargin: -2, audioSeconds: 1, decodeMilliseconds: 1)
        #expect(Self.close(cafe.margin(overWordsIn: [5..<9]), -3))
    }

    @Test("A command whose values fit poorly is turned away when the option is on, and says why")
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

        // Off (the default): the margin is reported, the decision is the two confidences'.
        let unjudged = understanding.understand(Self.switchOff(lamp: -6, point: nil))
        #expect(unjudged.accepted && Self.close(unjudged.valuesMargin, -6))

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

    @Test("Spoken: a request that only opens like a command is turned away with the option; the command itself is not")
    func spokenNearCommand() throws {
        let workspace = try Workspace.load(from: RecognitionFixtures.home)
        let understanding = SpeechUnderstanding(workspace: workspace)
        let synthesizer = try SpeechSynthesizer()
        let judged = try SpeechRecognizer(workspace: workspace,
                                          options: RecognitionOptions(valuesMarginPoint: RecognitionOptions.standardValuesMarginPoint),
                                          pronunciations: HomeWords())
        let usual = try SpeechRecognizer(workspace: workspace, pronunciations: HomeWords())

        // eSpeak NG's "switch off the oven" is heard as "switch off the lamp": the opening fits, the oven does not.
        let oven = try synthesizer.synthesize("switch off the oven").converted(to: .speech)
        let alone = understanding.understand(try usual.recognize(oven))
        #expect(alone.transcript.valuesMarginPoint == nil, "off by default")
        #expect(alone.accepted && alone.intent?.intent == "OffLight", "without the option the light goes off: \(alone.transcript.text)")
        let turnedAway = understanding.understand(try judged.recognize(oven))
        #expect(!turnedAway.accepted && turnedAway.valuesFitPoorly, "\(turnedAway.transcript.text): \(turnedAway.valuesMargin ?? 0)")
        #expect(turnedAway.transcript.valuesMarginPoint == RecognitionOptions.standardValuesMarginPoint)

        let lamp = understanding.understand(try judged.recognize(try synthesizer.synthesize("switch off the lamp").converted(to: .speech)))
        #expect(lamp.accepted && lamp.intent?.intent == "OffLight", "\(lamp.transcript.text): \(lamp.valuesMargin ?? 0)")
        #expect((lamp.valuesMargin ?? -99) > RecognitionOptions.standardValuesMarginPoint)
    }
}
