import Foundation

/// Turns a sentence into intents with calibrated confidences and entities, for one workspace.
///
/// How a confidence is made (and what `hark parse --explain` shows):
/// 1. **Classifier.** A softmax regression over word, entity-type and bigram features, trained on the
///    examples at load time (with an "irrelevant" class from counterexamples), gives `p(intent | words)`.
/// 2. **Coverage.** A classifier must pick among the intents it knows, so it is confident about
///    sentences it has never seen the like of. The unknown-word rate `u` of the input (content words the
///    workspace's examples never use and no entity explains; function words count little) is compared
///    with the rates held-out examples of the workspace itself show (each example scored with the words
///    only it uses counted as unknown, i.e. leave-one-out). If at least 20% of held-out examples have
///    a rate as high, there is no penalty; beyond that the confidence scales with how rare such a rate is.
///    A workspace whose examples are full of open-ended names (songs, places) tolerates unknown words; a
///    closed home-control vocabulary does not.
/// 3. **Exact matches.** A sentence equal to an example (after normalisation) gets 0.99 for its intent; one
///    equal to a counterexample gets every intent scaled down twenty-fold.
public struct Matcher: Sendable {
    public let workspace: Workspace
    let extractor: EntityExtractor
    let classifier: IntentClassifier
    let intentNames: [String]
    let documentFrequency: [String: Int]
    /// Held-out unknown-word rates of the examples, ascending.
    let heldOutRates: [Double]
    let exactExamples: [String: Int]
    let exactCounterexamples: Set<String>

    static let functionWordWeight = 0.15
    static let tailFraction = 0.2
    static let exactMatchConfidence = 0.99
    static let counterexampleScale = 0.05

    public init(workspace: Workspace) {
        self.workspace = workspace
        let extractor = EntityExtractor(workspace: workspace)
        self.extractor = extractor
        intentNames = workspace.intents.map(\.name)
        let reference = Date(timeIntervalSince1970: 1_767_225_600)  // a fixed clock: training must not depend on today
        let utc = TimeZone(identifier: "UTC")!

        var samples: [IntentClassifier.Sample] = []
        var exact: [String: Int] = [:]
        var df: [String: Int] = [:]
        var exampleTokens: [([Token], [EntityMatch])] = []
        for (label, intent) in workspace.intents.enumerated() {
            for example in intent.examples {
                let tokens = Tokenizer.tokenize(example.text)
                var entities = extractor.extract(from: example.text, tokens: tokens, now: reference, timeZone: utc)
                for m in example.mentions {
                    entities.removeAll { $0.start < m.end && m.start < $0.end }
                    entities.append(EntityMatch(entity: m.entity, value: "", start: m.start, end: m.end, literal: ""))
                }
                entities.sort { $0.start < $1.start }
                samples.append(.init(features: Features.extract(tokens: tokens, entities: entities).hashes, label: label, weight: 1))
                let key = Self.normalised(tokens)
                if let other = exact[key], other != label { exact[key] = -1 } else { exact[key] = label }
                for stem in Set(tokens.map(\.stem)) { df[stem, default: 0] += 1 }
                exampleTokens.append((tokens, entities))
            }
        }
        var counter: Set<String> = []
        for text in workspace.counterexamples {
            let tokens = Tokenizer.tokenize(text)
            let entities = extractor.extract(from: text, tokens: tokens, now: reference, timeZone: utc)
            samples.append(.init(features: Features.extract(tokens: tokens, entities: entities).hashes, label: intentNames.count, weight: 1))
            counter.insert(Self.normalised(tokens))
        }
        classifier = IntentClassifier(intents: intentNames, samples: samples, hasIrrelevantClass: !workspace.counterexamples.isEmpty)
        exactExamples = exact.filter { $0.value >= 0 }
        exactCounterexamples = counter
        documentFrequency = df
        // Held out, an example's own annotated mentions and dictionary matches say nothing (their values came
        // from it); only system entities (numbers, dates, times) explain words on their own.
        heldOutRates = exampleTokens.map { tokens, entities in
            let system = entities.filter { $0.entity.hasPrefix("sys-") }
            return Self.unknownRate(tokens: tokens, entities: system) { df[$0, default: 0] >= 2 }.rate
        }.sorted()
    }

    static func normalised(_ tokens: [Token]) -> String { tokens.map(\.text).joined(separator: " ") }

    /// The weighted share of words that are unknown, and which they are.
    static func unknownRate(tokens: [Token], entities: [EntityMatch], isKnown: (String) -> Bool) -> (rate: Double, unknown: [String]) {
        var total = 0.0
        var missing = 0.0
        var unknown: [String] = []
        var e = 0
        for t in tokens {
            while e < entities.count, entities[e].end <= t.start { e += 1 }
            let covered = entities[e...].contains { $0.start <= t.start && t.end <= $0.end }
            let weight = Tokenizer.functionWords.contains(t.text) ? functionWordWeight : 1
            total += weight
            if !covered, !isKnown(t.stem) {
                missing += weight
                unknown.append(t.text)
            }
        }
        return (total > 0 ? missing / total : 0, unknown)
    }

    /// The coverage factor for an unknown-word rate: 1 up to the rate that the top 20% of held-out examples
    /// reach, then decaying exponentially on the scale of the held-out spread (the distance from their
    /// median to their 95th percentile, at least 0.1), so that a workspace with open-ended examples decays
    /// slowly and a closed one quickly.
    func coverageFactor(_ rate: Double) -> Double {
        guard rate > 0, !heldOutRates.isEmpty else { return 1 }
        let knee = EvaluationReport.percentile(heldOutRates, 1 - Self.tailFraction)
        guard rate > knee else { return 1 }
        let scale = max(0.1, EvaluationReport.percentile(heldOutRates, 0.95) - EvaluationReport.percentile(heldOutRates, 0.5))
        return exp(-(rate - knee) / scale)
    }

    /// Understands one sentence: every intent with its confidence (highest first) and the entities.
    public func understand(_ text: String, now: Date = Date(), timeZone: TimeZone = .current) -> Understanding {
        analyse(text, now: now, timeZone: timeZone, explain: false).understanding
    }

    /// Understands one sentence and says why: features, per-intent scores, unknown words, exact matches.
    public func explain(_ text: String, now: Date = Date(), timeZone: TimeZone = .current) -> MatchExplanation {
        analyse(text, now: now, timeZone: timeZone, explain: true).explanation!
    }

    func analyse(_ text: String, now: Date, timeZone: TimeZone, explain: Bool) -> (understanding: Understanding, explanation: MatchExplanation?) {
        let tokens = Tokenizer.tokenize(text)
        let entities = extractor.extract(from: text, tokens: tokens, now: now, timeZone: timeZone)
        let (hashes, names) = Features.extract(tokens: tokens, entities: entities, names: explain)
        let (probabilities, _) = classifier.probabilities(hashes)
        let (rate, unknown) = Self.unknownRate(tokens: tokens, entities: entities) { documentFrequency[$0] != nil }
        let coverage = tokens.isEmpty ? 0 : coverageFactor(rate)
        let key = Self.normalised(tokens)
        let exactIntent = exactExamples[key]
        let isCounterexample = exactCounterexamples.contains(key)

        var scores: [IntentScore] = []
        scores.reserveCapacity(intentNames.count)
        for (i, name) in intentNames.enumerated() {
            var c = Double(probabilities[i]) * coverage
            if exactIntent == i { c = max(c, Self.exactMatchConfidence) }
            if isCounterexample { c *= Self.counterexampleScale }
            scores.append(IntentScore(intent: name, confidence: min(1, max(0, c))))
        }
        scores.sort { $0.confidence > $1.confidence || ($0.confidence == $1.confidence && $0.intent < $1.intent) }
        let understanding = Understanding(text: text, intents: scores, entities: entities)
        guard explain else { return (understanding, nil) }

        let contributions = classifier.contributions(hashes)
        let explanation = MatchExplanation(
            understanding: understanding,
            tokens: tokens.map(\.stem),
            features: contributions.map { c in
                MatchExplanation.Feature(name: names[c.feature], weights: Dictionary(uniqueKeysWithValues: zip(classifier.classes, c.perClass.map(Double.init))))
            },
            classifierProbabilities: Dictionary(uniqueKeysWithValues: zip(classifier.classes, probabilities.map(Double.init))),
            unknownWords: unknown, unknownRate: rate, coverageFactor: coverage,
            exactMatch: exactIntent.map { intentNames[$0] }, counterexampleMatch: isCounterexample,
            unknownFeatures: names.count - contributions.count)
        return (understanding, explanation)
    }
}

/// Why the matcher decided what it did, for `hark parse --explain`.
public struct MatchExplanation: Sendable {
    public struct Feature: Sendable {
        public var name: String
        /// Contribution to each class's logit.
        public var weights: [String: Double]
    }

    public var understanding: Understanding
    public var tokens: [String]
    public var features: [Feature]
    /// Softmax output before coverage and exact-match adjustments (includes `#irrelevant` if trained).
    public var classifierProbabilities: [String: Double]
    public var unknownWords: [String]
    public var unknownRate: Double
    public var coverageFactor: Double
    public var exactMatch: String?
    public var counterexampleMatch: Bool
    /// Features of the input the model never saw in training (they contribute nothing).
    public var unknownFeatures: Int
}
