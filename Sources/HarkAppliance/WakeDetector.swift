import HarkAudio
import HarkCore

/// A wake phrase heard in the stream.
public struct WakeHit: Sendable {
    public var phrase: String
    /// The audio after the phrase that the spotter has already consumed: the start of the command when the
    /// speaker did not pause.
    public var commandAudio: PCMBuffer
    /// Scores for the event log (keyphrase score, confirmation score, …).
    public var details: JSONObject

    public init(phrase: String, commandAudio: PCMBuffer, details: JSONObject = JSONObject()) {
        self.phrase = phrase
        self.commandAudio = commandAudio
        self.details = details
    }
}

/// What the loop needs from a wake-phrase spotter: fed the whole stream while idle, it says when the phrase
/// was heard. `WakePhraseSpotter` (HarkSpeech) is the real one.
public protocol WakeDetector: AnyObject {
    /// Feeds the next audio of the stream (16 kHz mono); a hit when this audio completed the phrase.
    func detect(_ buffer: PCMBuffer) throws -> WakeHit?
    /// Forgets partial matches (after a turn, so the reply's audio or the command cannot wake it).
    func restart() throws
}
