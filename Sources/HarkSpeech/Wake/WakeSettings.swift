import Foundation

/// How the wake phrase is spotted and confirmed, as `Models/wake.json` writes it (snake_case keys, every
/// field optional: a missing one takes the default below, which is what docs/wake-phrase.md measured).
///
/// A field of the wrong type or out of range, or a field the settings do not have, is an error naming it:
/// a typo must not quietly leave the appliance on a default. Keys starting with `_` are comments.
public struct WakeSettings: Codable, Sendable, Equatable {
    /// The wake phrase, words separated by spaces (`"hey hark"`).
    public var phrase: String
    /// PocketSphinx's `-kws_threshold`: how much more likely the keyphrase path must be than the best free
    /// phone sequence ending at the same frame, as a ratio in (0, 1]. Smaller spots more, and wakes falsely more.
    public var keyphraseThreshold: Double
    /// The keyphrase search's beam (its `-beam`, in (0, 1)): a partial path through the phrase that falls further
    /// than this below the frame's best is dropped. PocketSphinx's default, 1e-48, suits a phrase of two
    /// syllables; a longer phrase loses its true paths to it before they end (docs/wake-phrase.md, "Longer phrases").
    public var keyphraseBeam: Double
    /// How long after a keyphrase hit the spotter waits for a better-scoring alignment of the same phrase
    /// before it decides (`-kws_delay`, in 10 ms frames), seconds.
    public var settleSeconds: Double
    /// Whether a keyphrase hit is checked by the second pass (grammar of the phrase against a phone loop).
    public var confirms: Bool
    /// What a confirmed hit's score must reach. The score is the weakest word's acoustic margin (the phrase
    /// grammar's acoustic log-likelihood minus a free phone loop's over the word's frames, per 10 ms frame,
    /// natural log, ≤ 0 in practice; see `AcousticConfidence`) plus `confirmationDurationWeight` × the hit's
    /// length in seconds.
    public var confirmationThreshold: Double
    /// How much each second of the hit's length adds to its score. Keyphrase hits on other speech are
    /// mostly short (a quarter of a second: "hark" in "hark the herald", a fragment of noise), true ones as
    /// long as the phrase (about 0.6 s), so a short hit needs a much better margin (docs/wake-phrase.md).
    /// Lengths count up to 0.7 s. 0 leaves the margin alone.
    public var confirmationDurationWeight: Double
    /// Audio before the phrase's detected start that the second pass also decodes, seconds: silence (or the
    /// room) before the phrase gives the grammar's start something to anchor on.
    public var preRollSeconds: Double
    /// The longest a spoken phrase may take, seconds. Longer hits are rejected (a keyphrase path stretched
    /// over unrelated speech); it also sizes the audio the spotter keeps.
    public var maximumPhraseSeconds: Double
    /// Whether both passes decode with the noisy-speech means (`SpeechModel.noisyMeans`, the shipped
    /// `Models/en-us-noisy.means`) instead of the acoustic model's own. The spotter refuses to start when
    /// this is true and the model has none.
    public var noisyMeans: Bool
    /// The wake verifier's model file (`WakeVerifier`), relative to the folder of the settings file that names
    /// it (`"wake-verifier.json"` beside `Models/wake.json`); nil: no verifier.
    public var verifier: String?
    /// The verifier's probability a hit must reach, besides `confirmationThreshold` (when a verifier is set).
    public var verifierThreshold: Double

    public static let defaultPhrase = "hey hark"

    public init(
        phrase: String = WakeSettings.defaultPhrase, keyphraseThreshold: Double = 1e-40, keyphraseBeam: Double = 1e-48,
        settleSeconds: Double = 0.15,
        confirms: Bool = true, confirmationThreshold: Double = 7.5, confirmationDurationWeight: Double = 20,
        preRollSeconds: Double = 0.3, maximumPhraseSeconds: Double = 1.5, noisyMeans: Bool = false,
        verifier: String? = nil, verifierThreshold: Double = 0.5
    ) {
        self.phrase = phrase
        self.keyphraseThreshold = keyphraseThreshold
        self.keyphraseBeam = keyphraseBeam
        self.settleSeconds = settleSeconds
        self.confirms = confirms
        self.confirmationThreshold = confirmationThreshold
        self.confirmationDurationWeight = confirmationDurationWeight
        self.preRollSeconds = preRollSeconds
        self.maximumPhraseSeconds = maximumPhraseSeconds
        self.noisyMeans = noisyMeans
        self.verifier = verifier
        self.verifierThreshold = verifierThreshold
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case phrase
        case keyphraseThreshold = "kws_threshold"
        case keyphraseBeam = "kws_beam"
        case settleSeconds = "settle_seconds"
        case confirms = "confirm"
        case confirmationThreshold = "confirmation_threshold"
        case confirmationDurationWeight = "confirmation_duration_weight"
        case preRollSeconds = "pre_roll_seconds"
        case maximumPhraseSeconds = "maximum_phrase_seconds"
        case noisyMeans = "noisy_means"
        case verifier
        case verifierThreshold = "verifier_threshold"
    }

    /// The key under which a decoder's `userInfo` may name the source in errors (a file path).
    public static let sourceKey = CodingUserInfoKey(rawValue: "hark.wake.source")!  // a constant, valid key

    /// Reads the settings file at `url` (e.g. `Models/wake.json`).
    public static func load(from url: URL) throws(WakeSettingsError) -> WakeSettings {
        let data: Data
        do { data = try Data(contentsOf: url) } catch {
            throw .unreadable(path: url.path, reason: (error as NSError).localizedDescription)
        }
        return try decode(data, source: url.path)
    }

    /// Parses settings JSON; `source` names it in errors.
    public static func decode(_ data: Data, source: String = "wake settings") throws(WakeSettingsError) -> WakeSettings {
        let decoder = JSONDecoder()
        decoder.userInfo[sourceKey] = source
        do {
            return try decoder.decode(WakeSettings.self, from: data)
        } catch let error as WakeSettingsError {
            throw error
        } catch let DecodingError.typeMismatch(_, context) where context.codingPath.isEmpty {
            throw .malformed(source: source, reason: context.debugDescription)
        } catch {
            throw .malformed(source: source, reason: Self.reason(error))
        }
    }

    public init(from decoder: any Decoder) throws {
        let source = decoder.userInfo[Self.sourceKey] as? String ?? "wake settings"
        let container = try decoder.container(keyedBy: AnyKey.self)
        let known = CodingKeys.allCases.map(\.stringValue)
        for key in container.allKeys where !key.stringValue.hasPrefix("_") && !known.contains(key.stringValue) {
            throw WakeSettingsError.unknownField(source: source, field: key.stringValue, known: known)
        }
        let defaults = WakeSettings()
        func field<T: Decodable>(_ key: CodingKeys, _ type: T.Type, _ expected: String, default value: T, valid: (T) -> Bool) throws -> T {
            let name = AnyKey(key.stringValue)
            guard container.contains(name) else { return value }
            let decoded: T
            do { decoded = try container.decode(T.self, forKey: name) } catch {
                throw WakeSettingsError.invalidField(source: source, field: key.stringValue, expected: expected, got: Self.shown(container, name))
            }
            guard valid(decoded) else {
                throw WakeSettingsError.invalidField(source: source, field: key.stringValue, expected: expected, got: Self.shown(container, name))
            }
            return decoded
        }
        phrase = try field(.phrase, String.self, "one or more words separated by spaces", default: defaults.phrase) {
            !WakePhraseSpotter.words(of: $0).isEmpty
        }
        keyphraseThreshold = try field(.keyphraseThreshold, Double.self, "a number greater than 0 and at most 1 (e.g. 1e-20)", default: defaults.keyphraseThreshold) {
            $0 > 0 && $0 <= 1
        }
        keyphraseBeam = try field(.keyphraseBeam, Double.self, "a number greater than 0 and less than 1 (e.g. 1e-48)", default: defaults.keyphraseBeam) {
            $0 > 0 && $0 < 1
        }
        settleSeconds = try field(.settleSeconds, Double.self, "a number of seconds from 0 to 1", default: defaults.settleSeconds) { (0...1).contains($0) }
        confirms = try field(.confirms, Bool.self, "true or false", default: defaults.confirms) { _ in true }
        confirmationThreshold = try field(.confirmationThreshold, Double.self, "a score from -20 to 40 (natural log per frame, plus the duration term)", default: defaults.confirmationThreshold) {
            (-20...40).contains($0)
        }
        confirmationDurationWeight = try field(.confirmationDurationWeight, Double.self, "a weight from 0 to 100 per second", default: defaults.confirmationDurationWeight) {
            (0...100).contains($0)
        }
        preRollSeconds = try field(.preRollSeconds, Double.self, "a number of seconds from 0 to 2", default: defaults.preRollSeconds) { (0...2).contains($0) }
        maximumPhraseSeconds = try field(.maximumPhraseSeconds, Double.self, "a number of seconds from 0.3 to 5", default: defaults.maximumPhraseSeconds) {
            (0.3...5).contains($0)
        }
        noisyMeans = try field(.noisyMeans, Bool.self, "true or false", default: defaults.noisyMeans) { _ in true }
        verifier = try field(.verifier, String?.self, "a file name (relative to the settings file's folder) or null", default: defaults.verifier) {
            $0.map { !$0.isEmpty } ?? true
        }
        verifierThreshold = try field(.verifierThreshold, Double.self, "a probability from 0 to 1", default: defaults.verifierThreshold) { (0...1).contains($0) }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(phrase, forKey: .phrase)
        try container.encode(keyphraseThreshold, forKey: .keyphraseThreshold)
        try container.encode(keyphraseBeam, forKey: .keyphraseBeam)
        try container.encode(settleSeconds, forKey: .settleSeconds)
        try container.encode(confirms, forKey: .confirms)
        try container.encode(confirmationThreshold, forKey: .confirmationThreshold)
        try container.encode(confirmationDurationWeight, forKey: .confirmationDurationWeight)
        try container.encode(preRollSeconds, forKey: .preRollSeconds)
        try container.encode(maximumPhraseSeconds, forKey: .maximumPhraseSeconds)
        try container.encode(noisyMeans, forKey: .noisyMeans)
        try container.encode(verifier, forKey: .verifier)
        try container.encode(verifierThreshold, forKey: .verifierThreshold)
    }

    /// A field's value as written, for error messages.
    private static func shown(_ container: KeyedDecodingContainer<AnyKey>, _ key: AnyKey) -> String {
        if let text = try? container.decode(String.self, forKey: key) { return "\"\(text)\"" }
        if let flag = try? container.decode(Bool.self, forKey: key) { return String(flag) }
        if let number = try? container.decode(Double.self, forKey: key) { return String(number) }
        if (try? container.decodeNil(forKey: key)) == true { return "null" }
        return "a list or object"
    }

    private static func reason(_ error: any Error) -> String {
        switch error {
        case let DecodingError.dataCorrupted(context):
            let underlying = (context.underlyingError as NSError?)?.userInfo[NSDebugDescriptionErrorKey] as? String
            return underlying ?? context.debugDescription
        case let DecodingError.typeMismatch(_, context), let DecodingError.valueNotFound(_, context):
            return context.debugDescription
        default:
            return "\(error)"
        }
    }

    /// Any JSON object key, so unknown fields can be found and named.
    struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(_ string: String) { stringValue = string }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}
