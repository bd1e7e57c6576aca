import Foundation
import Testing
@testable import HarkCore

/// The confidence of small workspaces (issue 12): a tutorial-size workspace written for these tests, with
/// paraphrases and unrelated sentences none of which is an example, and the calibration arithmetic.
@Suite struct ConfidenceTests {
    static let data = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Data")
    static let tutorial: Matcher = Matcher(workspace: try! Workspace.load(from: data.appendingPathComponent("tutorial.json")))
    static let cases: [EvaluationCase] = {
        let text = try! String(contentsOf: data.appendingPathComponent("tutorial-cases.jsonl"), encoding: .utf8)
        return try! EvaluationCase.load(jsonLines: text, source: "tutorial-cases.jsonl")
    }()
    static let now = Date(timeIntervalSince1970: 1_795_000_000)

    @Test func theCasesAreNotExamples() throws {
        let ws = try Workspace.load(from: Self.data.appendingPathComponent("tutorial.json"))
        let examples = Set(ws.intents.flatMap { $0.examples.map { Matcher.normalised(Tokenizer.tokenize($0.text)) } })
        for c in Self.cases { #expect(!examples.contains(Matcher.normalised(Tokenizer.tokenize(c.text))), "\(c.text) is an example") }
        #expect(Self.cases.filter { $0.intent != nil }.count == 40)
        #expect(Self.cases.filter { $0.intent == nil }.count == 30)
    }

    /// Every paraphrase gets the right top intent, and most get it with the confidence the tutorial's app
    /// acts on (> 0.9). Measured: 40/40 right, 34/40 above 0.9 (the linear calibration: 22/40; before either: 12/40).
    /// Issue 12's target is 90% above 0.9: not reached yet; this guards what is.
    @Test func paraphrasesOfCommandsAreRightAndMostlySure() {
        let inScope = Self.cases.filter { $0.intent != nil }
        var right = 0
        var sure = 0
        for c in inScope {
            let u = Self.tutorial.understand(c.text, now: Self.now)
            if u.intents.first?.intent == c.intent { right += 1 }
            if u.intents.first?.intent == c.intent, (u.intents.first?.confidence ?? 0) > 0.9 { sure += 1 }
        }
        #expect(right == inScope.count)
        #expect(sure >= 33, "only \(sure) of \(inScope.count) above 0.9")
    }

    /// Unrelated sentences: measured 26/30 below 0.2 (the linear calibration: 13/30; before either: 0/30).
    /// Issue 12's target is 90%: not reached yet; this guards what is.
    @Test func unrelatedSentencesAreOftenRejected() {
        let outOfScope = Self.cases.filter { $0.intent == nil }
        let rejected = outOfScope.filter { (Self.tutorial.understand($0.text, now: Self.now).intents.first?.confidence ?? 0) < 0.2 }
        #expect(rejected.count >= 24, "only \(rejected.count) of \(outOfScope.count) rejected")
    }

    @Test func aSentenceOfWordsEnglishKnowsIsLessLikelyThanOneOfNames() {
        let words = Self.tutorial.understand("remind me to buy milk", now: Self.now)
        #expect(words.evidence.unknownCommon == 3)
        #expect(words.evidence.unknownRare == 0)
        let names = Self.tutorial.understand("zorblat quixnor", now: Self.now)
        #expect(names.evidence.unknownRare == 2)
        var evidence = words.evidence
        evidence.unknownRare = evidence.unknownCommon
        evidence.unknownCommon = 0
        #expect(ConfidenceModel.confidence(evidence) > ConfidenceModel.confidence(words.evidence))
    }

    /// Nothing the examples had: the classifier's answer would be its bias, so no intent at all.
    @Test func aSentenceWithNothingTheExamplesHadGetsNoIntent() {
        let u = Self.tutorial.understand("blah blah", now: Self.now)
        #expect(u.intents.allSatisfy { $0.confidence == 0 }, "\(u.intents)")
        #expect(u.reportedIntents(alternates: false).isEmpty)
        let known = Self.tutorial.understand("blah the light", now: Self.now)
        #expect((known.intents.first?.confidence ?? 0) > 0)
    }

    @Test func theLexiconSkipsNamesAndPossessives() {
        let lexicon = EnglishLexicon(words: ["light", "Boston", "light's", "milk"])
        #expect(lexicon.contains("milk", stem: "milk"))
        #expect(lexicon.contains("lights", stem: "light"))
        #expect(!lexicon.contains("boston", stem: "boston"))
        #expect(!EnglishLexicon(path: "/nonexistent/words").isAvailable)
        #expect(EnglishLexicon(path: "/nonexistent/words").source.contains("/nonexistent/words"))
    }

    @Test func theSharedLexiconIsInstalled() {
        #expect(EnglishLexicon.shared.isAvailable, "\(EnglishLexicon.shared.source)")
        #expect(EnglishLexicon.shared.contains("hamlet", stem: "hamlet"))
    }

    @Test func withoutAlternatesOnlyTheTopIntentIsReported() {
        let u = Understanding(text: "x", intents: [IntentScore(intent: "A", confidence: 0.7), IntentScore(intent: "B", confidence: 0.25)], entities: [])
        #expect(u.reportedIntents(alternates: false).map(\.intent) == ["A"])
        #expect(u.reportedIntents(alternates: true).map(\.intent) == ["A", "B"])
        let low = Understanding(text: "x", intents: [IntentScore(intent: "A", confidence: 0.15)], entities: [])
        #expect(low.reportedIntents(alternates: false).isEmpty)
        #expect(low.reportedIntents(alternates: true).count == 1)
    }

    @Test func expectedCalibrationErrorIsTheWeightedGap() {
        var c = EvaluationReport.Calibration()
        for k in 0..<10 { c.add(confidence: 0.95, correct: k < 9) }  // 0.95 said, 0.9 right: gap 0.05
        for k in 0..<10 { c.add(confidence: 0.35, correct: k < 5) }  // 0.35 said, 0.5 right: gap 0.15
        #expect(abs(c.expectedCalibrationError - 0.10) < 1e-9)
        #expect(c.counts[9] == 10 && c.counts[3] == 10)
        var perfect = EvaluationReport.Calibration()
        for k in 0..<10 { perfect.add(confidence: 0.8, correct: k < 8) }
        #expect(perfect.expectedCalibrationError < 1e-9)
    }

    /// A large workspace keeps its accuracy: car-dashboard (2,506 examples), every fifth example of each intent
    /// held out. Measured 0.88 top-intent accuracy, the classifier's alone (calibration does not reorder).
    @Test func aLargeWorkspaceKeepsItsAccuracy() throws {
        let ws = try Workspace.load(from: Fixtures.watson("car-dashboard"))
        var train = ws
        var held: [EvaluationCase] = []
        for (i, intent) in ws.intents.enumerated() {
            train.intents[i].examples = intent.examples.enumerated().filter { $0.offset % 5 != 0 }.map(\.element)
            held += intent.examples.enumerated().filter { $0.offset % 5 == 0 }.map { EvaluationCase(text: $0.element.text, intent: intent.name) }
        }
        let report = EvaluationReport.run(matcher: Matcher(workspace: train), cases: held, timingRepeats: 1)
        let top = Double(report.calibration.correct.reduce(0, +)) / Double(report.calibration.total)
        #expect(top >= 0.85, "top-intent accuracy \(top)")
        #expect(report.accuracy >= 0.80, "accepted and right \(report.accuracy)")
    }
}
