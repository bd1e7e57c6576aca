import Foundation

/// An intent with its confidence in [0, 1].
public struct IntentScore: Sendable, Equatable {
    public var intent: String
    public var confidence: Double

    public init(intent: String, confidence: Double) {
        self.intent = intent
        self.confidence = confidence
    }

    public var json: JSONValue {
        .object(JSONObject([("intent", .string(intent)), ("confidence", .number(IntentScore.rounded(confidence)))]))
    }

    /// Confidences are reported to four decimals, like Watson's responses.
    static func rounded(_ x: Double) -> Double { (x * 10_000).rounded() / 10_000 }
}

/// An entity found in the input.
public struct EntityMatch: Sendable, Equatable {
    /// The entity name without `@`, e.g. `appliance` or `sys-number`.
    public var entity: String
    /// The normalised value: the dictionary value (not the synonym), `25` for "twenty five", `2026-11-30` for "today".
    public var value: String
    /// Character offsets `[start, end)` into the input text (zero-based, counted in Unicode scalars).
    public var start: Int
    public var end: Int
    public var confidence: Double
    /// The input text that was matched.
    public var literal: String
    /// Extra facts, e.g. `{"numeric_value": 25}` for numbers, or the regex groups of a pattern.
    public var metadata: JSONObject?
    /// Capture groups of pattern entities, as Watson reports them.
    public var groups: [JSONValue]?

    public init(
        entity: String, value: String, start: Int, end: Int, confidence: Double = 1, literal: String,
        metadata: JSONObject? = nil, groups: [JSONValue]? = nil
    ) {
        self.entity = entity
        self.value = value
        self.start = start
        self.end = end
        self.confidence = confidence
        self.literal = literal
        self.metadata = metadata
        self.groups = groups
    }

    /// The Watson `/message` shape: `{entity, location, value, confidence, metadata?, groups?}`.
    public var json: JSONValue {
        var o = JSONObject()
        o["entity"] = .string(entity)
        o["location"] = .array([.number(Double(start)), .number(Double(end))])
        o["value"] = .string(value)
        o["confidence"] = .number(IntentScore.rounded(confidence))
        if let metadata { o["metadata"] = .object(metadata) }
        if let groups { o["groups"] = .array(groups) }
        return .object(o)
    }
}

/// What the matcher made of one sentence: the input, intents by confidence and entities by position.
public struct Understanding: Sendable {
    public var text: String
    /// Every intent of the workspace, highest confidence first.
    public var intents: [IntentScore]
    public var entities: [EntityMatch]
    /// What the top confidence was computed from (see `ConfidenceModel`).
    public var evidence: ConfidenceEvidence

    public init(text: String, intents: [IntentScore], entities: [EntityMatch], evidence: ConfidenceEvidence = ConfidenceEvidence()) {
        self.text = text
        self.intents = intents
        self.entities = entities
        self.evidence = evidence
    }

    /// Watson's rule: intents under 0.2 are not returned (nor seen by dialog conditions) unless alternates are asked for.
    public static let reportingThreshold = 0.2

    /// The intents a response shows, as IBM's v1 service does: without `alternates` only the top intent, and
    /// only if it reaches 0.2 (so an irrelevant input has none); with `alternates` the top ten, whatever their
    /// confidence.
    public func reportedIntents(alternates: Bool) -> [IntentScore] {
        if alternates { return Array(intents.prefix(10)) }
        guard let top = intents.first, top.confidence >= Understanding.reportingThreshold else { return [] }
        return [top]
    }
}
