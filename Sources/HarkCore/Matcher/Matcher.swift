import Foundation

/// Turns a sentence into intents with calibrated confidences and entities, for one workspace.
///
/// How a confidence is made (and what `hark parse --explain` shows):
/// 1. **Classifier.** A softmax regression over word, entity-type and bigram features, trained on the
///    examples at load time (with an "irrelevant" class from counterexamples), gives `p(intent | words)`:
///    which intent, if any.
/// 2. **Evidence.** Each word of the input is sorted by what it says about whether the sentence belongs to
///    the workspace at all: inside an entity, a function word, a word the examples use, or a word they never
///    use — one English knows well (evidence against every intent) or not (a name or a typo, weak evidence).
///    With the classifier's top probability, how open the workspace's vocabulary is and how many examples it
///    has, this is `ConfidenceEvidence`.
/// 3. **Calibration.** `ConfidenceModel`, small neural networks fitted once across many workspaces of every size,
///    turns the evidence into the probability that the top intent is right. The other intents keep their
///    classifier odds against the top one.
///    A sentence none of whose features (words, word pairs, entity types) any example has gets no intent: the
///    classifier's answer would be its bias alone.
/// 4. **Exact matches.** A sentence equal to an example (after normalisation) gets 0.99 for its intent; one
///    equal to a counterexample gets every intent scaled down twenty-fold.
public struct Matcher: Sendable {
    public let workspace: Workspace
    let extractor: EntityExtractor
    let classifier: IntentClassifier
    let intentNames: [String]
    /// For each stem, the intent whose examples use it most, if that intent has at least half of its uses.
    let dominantIntent: [String: Int]
    /// For each stem some example uses, the share of each intent's examples that use it (intent index → share).
    let intentShare: [String: [Int: Double]]
    let lexicon: EnglishLexicon
    /// The median held-out unknown-word rate of the examples (`ConfidenceEvidence.openness`).
    let openness: Double
    let examplesPerIntent: Double
    let exactExamples: [String: Int]
    let exactCounterexamples: Set<String>

    static let functionWordWeight = 0.15
    static let exactMatchConfidence = 0.99
    static let counterexampleScale = 0.05

    public init(workspace: Workspace, lexicon: EnglishLexicon = .shared) {
        self.workspace = workspace
        self.lexicon = lexicon
        let extractor = EntityExtractor(workspace: workspace)
        self.extractor = extractor
        intentNames = workspace.intents.map(\.name)
        let reference = Date(timeIntervalSince1970: 1_767_225_600)  // a fixed clock: training must not depend on today
        let utc = TimeZone(identifier: "UTC")!

        var samples: [IntentClassifier.Sample] = []
        var exact: [String: Int] = [:]
        var df: [String: Int] = [:]
        var exampleTokens: [([Token], [EntityMatch])] = []
        var perIntent: [String: [Int: Int]] = [:]
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
                for stem in Set(tokens.map(\.stem)) {
                    df[stem, default: 0] += 1
                    perIntent[stem, default: [:]][label, default: 0] += 1
                }
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
        var dominant: [String: Int] = [:]
        for (stem, counts) in perIntent {
            let total = counts.values.reduce(0, +)
            if let best = counts.max(by: { ($0.value, $1.key) < ($1.value, $0.key) }), 2 * best.value >= total { dominant[stem] = best.key }
        }
        dominantIntent = dominant
        let exampleCounts = workspace.intents.map { max($0.examples.count, 1) }
        intentShare = perIntent.mapValues { counts in counts.reduce(into: [:]) { $0[$1.key] = Double($1.value) / Double(exampleCounts[$1.key]) } }
        // Held out, an example's own annotated mentions and dictionary matches say nothing (their values came
        // from it); only system entities (numbers, dates, times) explain words on their own.
        let heldOutRates = exampleTokens.map { tokens, entities in
            let system = entities.filter { $0.entity.hasPrefix("sys-") }
            return Self.unknownRate(tokens: tokens, entities: system) { df[$0, default: 0] >= 2 }
        }.sorted()
        openness = EvaluationReport.percentile(heldOutRates, 0.5)
        examplesPerIntent = workspace.intents.isEmpty ? 0 : Double(exampleTokens.count) / Double(workspace.intents.count)
    }

    static func normalised(_ tokens: [Token]) -> String { tokens.map(\.text).joined(separator: " ") }

    /// The weighted share of words that are unknown (function words weigh `functionWordWeight`).
    static func unknownRate(tokens: [Token], entities: [EntityMatch], isKnown: (String) -> Bool) -> Double {
        var total = 0.0
        var missing = 0.0
        var e = 0
        for t in tokens {
            while e < entities.count, entities[e].end <= t.start { e += 1 }
            let covered = entities[e...].contains { $0.start <= t.start && t.end <= $0.end }
            let weight = Tokenizer.functionWords.contains(t.text) ? functionWordWeight : 1
            total += weight
            if !covered, !isKnown(t.stem) { missing += weight }
        }
        return total > 0 ? missing / total : 0
    }

    /// Sorts each word of the input (see `ConfidenceEvidence`) and lists the words no example uses.
    func evidence(tokens: [Token], entities: [EntityMatch], classifierTop: Double, topIntent: Int) -> (evidence: ConfidenceEvidence, unknown: [String]) {
        var ev = ConfidenceEvidence()
        ev.classifierTop = classifierTop
        ev.openness = openness
        ev.examplesPerIntent = examplesPerIntent
        var unknown: [String] = []
        var e = 0
        var previousUnknown = false
        var sawContent = false
        for t in tokens {
            var isUnknown = false
            defer { previousUnknown = isUnknown }
            while e < entities.count, entities[e].end <= t.start { e += 1 }
            if let covering = entities[e...].first(where: { $0.start <= t.start && t.end <= $0.end }) {
                if covering.entity.hasPrefix("sys-") { ev.systemEntityWords += 1 } else { ev.entityWords += 1 }
            } else if Tokenizer.functionWords.contains(t.text) {
                ev.functionWords += 1
            } else if let shares = intentShare[t.stem] {
                ev.known += 1
                if dominantIntent[t.stem] == topIntent { ev.topIntentWords += 1 }
                let share = shares[topIntent] ?? 0
                ev.topIntentTypicality += share
                ev.topIntentKeyword = max(ev.topIntentKeyword, share)
                if !sawContent { ev.firstContentKnown = 1 }
                sawContent = true
            } else {
                isUnknown = true
                unknown.append(t.text)
                if lexicon.contains(t.text, stem: t.stem) { ev.unknownCommon += 1 } else { ev.unknownRare += 1 }
                if !previousUnknown { ev.unknownRuns += 1 }
                if !sawContent { ev.firstContentKnown = 0 }
                sawContent = true
            }
        }
        return (ev, unknown)
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
        let (probabilities, knownFeatures) = classifier.probabilities(hashes)
        var top = 0
        for i in intentNames.indices where probabilities[i] > probabilities[top] { top = i }
        let classifierTop = intentNames.isEmpty ? 0 : Double(probabilities[top])
        var (evidence, unknown) = evidence(tokens: tokens, entities: entities, classifierTop: classifierTop, topIntent: top)
        for i in intentNames.indices where i != top { evidence.classifierSecond = max(evidence.classifierSecond, Double(probabilities[i])) }
        // The calibrated probability that the top intent is right; the others keep their odds against it.
        // With no feature the examples ever had ("blah blah"), the classifier's answer is its bias alone: no intent.
        let topConfidence = tokens.isEmpty || knownFeatures == 0 ? 0 : ConfidenceModel.confidence(evidence)
        let scale = classifierTop > 0 ? topConfidence / classifierTop : 0
        let key = Self.normalised(tokens)
        let exactIntent = exactExamples[key]
        let isCounterexample = exactCounterexamples.contains(key)

        var scores: [IntentScore] = []
        scores.reserveCapacity(intentNames.count)
        for (i, name) in intentNames.enumerated() {
            var c = Double(probabilities[i]) * scale
            if exactIntent == i { c = max(c, Self.exactMatchConfidence) }
            if isCounterexample { c *= Self.counterexampleScale }
            scores.append(IntentScore(intent: name, confidence: min(1, max(0, c))))
        }
        scores.sort { $0.confidence > $1.confidence || ($0.confidence == $1.confidence && $0.intent < $1.intent) }
        let understanding = Understanding(text: text, intents: scores, entities: entities, evidence: evidence)
        guard explain else { return (understanding, nil) }

        let contributions = classifier.contributions(hashes)
        let explanation = MatchExplanation(
            understanding: understanding,
            tokens: tokens.map(\.stem),
            features: contributions.map { c in
                MatchExplanation.Feature(name: names[c.feature], weights: Dictionary(uniqueKeysWithValues: zip(classifier.classes, c.perClass.map(Double.init))))
            },
            classifierProbabilities: Dictionary(uniqueKeysWithValues: zip(classifier.classes, probabilities.map(Double.init))),
            unknownWords: unknown, evidence: evidence, calibratedConfidence: topConfidence,
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
    /// Softmax output before calibration and exact-match adjustments (includes `#irrelevant` if trained).
    public var classifierProbabilities: [String: Double]
    public var unknownWords: [String]
    /// What the calibration saw, and the top intent's confidence it gave (before the exact-match rules).
    public var evidence: ConfidenceEvidence
    public var calibratedConfidence: Double
    public var exactMatch: String?
    public var counterexampleMatch: Bool
    /// Features of the input the model never saw in training (they contribute nothing).
    public var unknownFeatures: Int
}
