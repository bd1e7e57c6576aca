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
    /// The largest share of the top intent's examples that use one of the input's known words: near 1 when the
    /// input has the intent's keyword ("playlist", "photo"), small when its known words are incidental.
    public var topIntentKeyword: Double = 0
    /// The same shares summed over the input's known words.
    public var topIntentTypicality: Double = 0
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

    /// The model's inputs, named by `featureNames`: the classifier's belief as log-odds, word counts capped where
    /// more of the same stops telling anything new, and the same counts as shares of the sentence's words.
    public var features: [Double] {
        let p = min(max(classifierTop, 1e-4), 1 - 1e-4)
        let unknown = unknownCommon + unknownRare
        let words = max(known + entityWords + systemEntityWords + unknown, 1)
        return [
            log(p / (1 - p)),
            min(log(p / max(classifierSecond, 1e-4)), 8),
            min(known, 6),
            min(entityWords, 4),
            min(systemEntityWords, 4),
            min(unknownCommon, 6),
            min(unknownRare, 6),
            openness,
            log(max(examplesPerIntent, 1)),
            min(topIntentWords, 4),
            min(unknownRuns, 4),
            firstContentKnown,
            unknownCommon / words,
            unknownRare / words,
            (known + entityWords + systemEntityWords) / words,
            unknown == 0 ? 1 : 0,
            min(functionWords, 8),
            topIntentKeyword,
            min(topIntentTypicality, 3),
        ]
    }

    public static let featureNames = [
        "classifier_logit", "classifier_margin", "known", "entity_words", "system_entity_words", "unknown_common",
        "unknown_rare", "openness", "log_examples_per_intent", "top_intent_words", "unknown_runs", "first_content_known",
        "unknown_common_share", "unknown_rare_share", "known_share", "all_known", "function_words",
        "top_intent_keyword", "top_intent_typicality",
    ]

    public var json: JSONValue {
        func r(_ x: Double) -> JSONValue { .number((x * 10_000).rounded() / 10_000) }
        return .object(JSONObject([
            ("classifier_top", r(classifierTop)), ("classifier_second", r(classifierSecond)), ("known", r(known)), ("entity_words", r(entityWords)),
            ("system_entity_words", r(systemEntityWords)), ("function_words", r(functionWords)),
            ("unknown_common", r(unknownCommon)), ("unknown_rare", r(unknownRare)), ("openness", r(openness)),
            ("examples_per_intent", r(examplesPerIntent)), ("top_intent_words", r(topIntentWords)),
            ("unknown_runs", r(unknownRuns)), ("first_content_known", r(firstContentKnown)),
            ("top_intent_keyword", r(topIntentKeyword)), ("top_intent_typicality", r(topIntentTypicality)),
        ]))
    }
}

/// Turns `ConfidenceEvidence` into the probability that the top intent is the right answer.
///
/// Four small neural networks — the standardised features, one hidden layer of 16 `tanh` units, a log-odds
/// output — whose mean log-odds is the confidence (one network's answer in a corner of the evidence the fit saw
/// little of depends on its random start; the mean of four much less). They are fitted once, across many
/// workspaces, by `bench/fit_confidence.py`, never per workspace and never on a benchmark's test sentences.
/// The fitting data are workspaces of every size drawn from the Snips 2017 *training*
/// files, the Watson exports and `Intents/home.json`, each asked both its own held-out sentences (the answer is
/// right or wrong) and other domains' sentences (the answer is always wrong). So the confidence means what it
/// says: of the sentences given 0.8, about eight in ten got the right intent, whether the workspace has five
/// examples an intent or three hundred.
///
/// Why not a straight logistic model of the same features: the evidence interacts. An unknown common word is
/// strong evidence against a closed command set of six examples an intent ("remind me to buy milk" to a light
/// switch) and weak evidence against a workspace full of song and place names; a sentence whose every word is
/// known is almost surely in scope when the classifier agrees, and not when it is torn between two intents.
/// A linear model has one weight for each and has to split the difference; the hidden layer learns the
/// combinations (docs/language-engine.md has the numbers).
public enum ConfidenceModel {
    /// One fitted network (the name `bench/fit_confidence.py` writes in ConfidenceModel+Parameters.swift).
    typealias Network = TanhNetwork

    /// The fitted networks and their inputs' standardisation (`networks`, `inputMean`, `inputScale`).
    static let ensemble = TanhEnsemble(mean: inputMean, scale: inputScale, networks: networks)

    /// The mean log-odds of the fitted networks, as a probability.
    public static func confidence(_ evidence: ConfidenceEvidence) -> Double {
        ensemble.probability(evidence.features)
    }
}
