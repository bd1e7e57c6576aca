/// One keyphrase hit and what the second pass made of it, kept for evaluation (stream positions in samples).
struct WakeCandidate: Sendable, Equatable {
    /// Where the keyphrase search placed the phrase.
    var start: Int
    var end: Int
    /// log10 of the keyphrase search's likelihood ratio.
    var keyphraseScore: Double
    /// The phrase grammar's acoustic log-likelihood minus the phone loop's, per frame, over the whole
    /// confirmation window; `nil` when the second pass is off or the grammar found no path.
    var margin: Double?
    /// The same margin word by word (each word's frames against the phone-loop phones inside them), the
    /// lowest one.
    var weakestWordMargin: Double?
    /// `weakestWordMargin` plus `confirmationDurationWeight` × the hit's length in seconds: what
    /// `confirmationThreshold` is compared with.
    var score: Double?
    /// Where the phrase's last word ended in the grammar's alignment (or `end`).
    var commandStart: Int
    /// The verifier's probability that this is the phrase, when the spotter has a verifier.
    var verifierProbability: Double?
    /// The hit's `WakeFeatures` spectrogram, kept when the spotter records candidates (the verifier's
    /// training data).
    var spectrogram: [Float]?
    var accepted: Bool
    /// Why it was rejected, for the evaluation's listing ("" when accepted).
    var rejection: String
}
