import Foundation

/// What the top intent's confidence is computed from: the classifier's belief and the words of the input,
/// each sorted into what it tells about whether the sentence belongs to the workspace at all.
///
/// Every word of the input falls in exactly one class: inside a workspace entity's span, inside a system
/// entity's span (numbers, dates, times), a function word ("the", "please", "could"), a word some example
/// uses (`known`), or a word no example uses — which English knows well (`unknownCommon`) or does not
/// (`unknownRare`: a name, a typo). See `ConfidenceModel` for how they are weighed.
public struct ConfidenceEvidence: Sendable, Equatable {
    /// The classifier's probability for its top intent (softmax; the `#irrelevant` class takes its share).
    public var classifierTop: Double = 0
    /// The classifier's probability for its second intent (0 with one intent).
    public var classifierSecond: Double = 0
    public var known: Double = 0
    public var entityWords: Double = 0
    public var systemEntityWords: Double = 0
    public var functionWords: Double = 0
    public var unknownCommon: Double = 0
    public var unknownRare: Double = 0
    /// Known words whose examples mostly (at least half) belong to the classifier's top intent.
    public var topIntentWords: Double = 0
    /// Runs of consecutive unknown words: a name slotted into a command is one run, an unrelated sentence many.
    public var unknownRuns: Double = 0
    /// Whether the first word that is neither a function word nor inside an entity is known (1), unknown (0),
    /// or there is none (0.5): commands lead with their verb ("play", "turn", "book").
    public var firstContentKnown: Double = 0.5
    /// How open the workspace's vocabulary is: the median share of each example's words that no other example
    /// uses (function words weighted 0.15). High for workspaces full of names (songs, places), low for closed
    /// command sets.
    public var openness: Double = 0
    /// Mean examples per intent: how much the classifier had to learn from.
    public var examplesPerIntent: Double = 0

    public init() {}

    /// The model's inputs, in the order of `ConfidenceModel.coefficients`.
    public var features: [Double] {
        let p = min(max(classifierTop, 1e-4), 1 - 1e-4)
        let unknown = unknownCommon + unknownRare
        return [
            1,
            log(p / (1 - p)),
            min(known, 6),
            min(entityWords, 4),
            min(systemEntityWords, 4),
            unknownCommon,
            unknownRare,
            unknown * openness,
            unknown == 0 ? 1 : 0,
            log(max(examplesPerIntent, 1)),
            min(topIntentWords, 4),
            unknownRuns,
            firstContentKnown,
            min(log(p / max(classifierSecond, 1e-4)), 8),
            unknown * log(max(examplesPerIntent, 1)),
        ]
    }

    public static let featureNames = [
        "bias", "classifier_logit", "known", "entity_words", "system_entity_words", "unknown_common", "unknown_rare",
        "unknown_x_openness", "all_known", "log_examples_per_intent", "top_intent_words", "unknown_runs", "first_content_known", "classifier_margin", "unknown_x_log_examples",
    ]

    public var json: JSONValue {
        func r(_ x: Double) -> JSONValue { .number((x * 10_000).rounded() / 10_000) }
        return .object(JSONObject([
            ("classifier_top", r(classifierTop)), ("classifier_second", r(classifierSecond)), ("known", r(known)), ("entity_words", r(entityWords)),
            ("system_entity_words", r(systemEntityWords)), ("function_words", r(functionWords)),
            ("unknown_common", r(unknownCommon)), ("unknown_rare", r(unknownRare)), ("openness", r(openness)),
            ("examples_per_intent", r(examplesPerIntent)), ("top_intent_words", r(topIntentWords)),
            ("unknown_runs", r(unknownRuns)), ("first_content_known", r(firstContentKnown)),
        ]))
    }
}

/// Turns `ConfidenceEvidence` into the probability that the top intent is the right answer.
///
/// A logistic model, `confidence = 1 / (1 + exp(-Σ coefficient × feature))`, fitted once, across many
/// workspaces, by `bench/fit_confidence.py` — never per workspace and never on a benchmark's test sentences.
/// The fitting data are workspaces of every size drawn from the Snips 2017 *training* files, the Watson
/// exports and `Intents/home.json`, each asked both its own held-out sentences (the answer is right or wrong)
/// and other domains' sentences (the answer is always wrong). So the confidence means what it says: of the
/// sentences given 0.8, about eight in ten got the right intent, whether the workspace has five examples an
/// intent or three hundred.
public enum ConfidenceModel {
    /// `bench/fit_confidence.py` prints these (see docs/language-engine.md for the run that made them). They were
    /// fitted from `hark eval --cases-out` evidence whose classifier probabilities were rounded to four decimals;
    /// the script now reads the unrounded features and prints values that differ from these in the fourth decimal.
    static let coefficients: [Double] = [-0.7441, 0.2286, 0.1154, 0.1324, -0.1047, -0.4759, -0.2428, 0.9200, -0.4337, 0.0402, 0.8565, -0.1726, 0.0539, 0.6021, -0.0924]

    public static func confidence(_ evidence: ConfidenceEvidence) -> Double {
        var z = 0.0
        for (c, x) in zip(coefficients, evidence.features) { z += c * x }
        return 1 / (1 + exp(-z))
    }
}
