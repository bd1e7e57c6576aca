import HarkAudio

/// The wake phrase was heard: where in the stream, how clearly, and where the command after it begins.
///
/// Times are seconds from the start of the stream (the spotter's creation or its last `reset()`).
public struct WakeDetection: Sendable, Equatable {
    /// The phrase as spotted (normalised: lower case, single spaces).
    public var phrase: String
    /// When the phrase began.
    public var start: Double
    /// When the phrase ended.
    public var time: Double
    /// The keyphrase search's score: log10 of how much more likely the phrase was than the best free phone
    /// sequence at its end (compare with log10 of `WakeSettings.keyphraseThreshold`; higher is clearer).
    public var keyphraseScore: Double
    /// The second pass's score: the acoustic margin of the phrase's weakest word (the phrase grammar's
    /// log-likelihood minus a free phone loop's over that word's frames, per 10 ms frame, natural log; near 0
    /// for the phrase, far below for other speech) plus `confirmationDurationWeight` × the phrase's length in
    /// seconds; `nil` when confirmation is off.
    public var confirmationScore: Double?
    /// Where the command after the phrase starts (the end of the phrase's last word as the second pass
    /// aligned it, or `time` without confirmation).
    public var commandStart: Double
    /// The audio from `commandStart` up to the end of the buffer that gave the detection: the spotter waits a
    /// little past the phrase before it decides, and that audio already belongs to the command.
    public var commandAudio: PCMBuffer

    public init(
        phrase: String, start: Double, time: Double, keyphraseScore: Double, confirmationScore: Double?, commandStart: Double,
        commandAudio: PCMBuffer
    ) {
        self.phrase = phrase
        self.start = start
        self.time = time
        self.keyphraseScore = keyphraseScore
        self.confirmationScore = confirmationScore
        self.commandStart = commandStart
        self.commandAudio = commandAudio
    }
}
