/// Where an utterance stands after the audio an `Endpointer` has seen so far.
public enum EndpointerDecision: Sendable, Equatable {
    /// No speech yet: keep listening.
    case waitingForSpeech
    /// Speech has started and not yet ended: keep feeding audio.
    case inSpeech
    /// The utterance is over: decode it, then `reset()` before the next one.
    case ended(reason: Reason)

    /// Why an utterance ended.
    public enum Reason: Sendable, Equatable {
        /// The speaker stopped: `trailingSilence` of non-speech followed the last speech.
        case trailingSilence
        /// The utterance reached `maximumLength` (someone kept talking, or the noise never stopped).
        case maximumLength
    }

    /// Whether the utterance is over.
    public var hasEnded: Bool {
        if case .ended = self { return true }
        return false
    }
}
