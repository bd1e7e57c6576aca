import Foundation

/// Turns the acoustic margin of a hypothesis into a confidence in 0…1.
///
/// A grammar search always finds *some* sentence of the grammar, even for speech that has nothing to do with
/// it. So the same audio is also decoded by a free phone loop (any phone sequence, weighted by a phone
/// bigram model), which fits any speech about as well as speech can be fit. The margin is the grammar path's
/// acoustic log-likelihood minus the phone loop's, per 10 ms frame: close to zero when the grammar's words
/// explain the audio, strongly negative when they are forced onto other speech. A logistic maps it to 0…1:
/// `1 / (1 + exp(-(margin - midpoint) / scale))`.
public struct AcousticConfidence: Sendable, Equatable {
    /// The margin that maps to 0.5.
    public var midpoint: Double
    /// How quickly confidence rises around the midpoint (natural-log units per frame).
    public var scale: Double

    public init(midpoint: Double, scale: Double) {
        self.midpoint = midpoint
        self.scale = scale
    }

    /// Calibrated on the speech-to-intent benchmark's dev half (clean and kitchen noise down to 6 dB) against
    /// LibriVox read speech and synthesized out-of-domain sentences; see the recogniser report.
    public static let standard = AcousticConfidence(midpoint: -1.0, scale: 0.25)

    public func confidence(margin: Double) -> Double {
        1 / (1 + exp(-(margin - midpoint) / scale))
    }
}
