import HarkAudio
import HarkCore

/// A wake phrase heard in the stream.
public struct WakeHit: Sendable {
    public var phrase: String
    /// Seconds into the stream where the phrase ended and a command may start.
    public var commandStart: Double
    /// Scores for the event log (keyphrase score, confirmation score, …).
    public var details: JSONObject

    public init(phrase: String, commandStart: Double, details: JSONObject = JSONObject()) {
        self.phrase = phrase
        self.commandStart = commandStart
        self.details = details
    }
}

/// What the loop needs from a wake-phrase spotter: fed the whole stream while idle, it says when the phrase
/// was heard. `WakePhraseSpotter` (HarkSpeech) is the real one.
public protocol WakeDetector: AnyObject {
    /// Feeds the next audio of the stream (16 kHz mono); a hit when this audio completed the phrase.
    func detect(_ buffer: PCMBuffer) throws -> WakeHit?
    /// Forgets partial matches (after a turn, so the reply's audio or the command cannot wake it).
    func reset()
}
