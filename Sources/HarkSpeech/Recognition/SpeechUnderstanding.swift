import HarkCore

/// A spoken command understood: what was heard, what the matcher made of the words, and whether to act.
public struct SpokenCommand: Sendable {
    public var transcript: Transcript
    /// The matcher's reading of `transcript.text`: exactly what typing the same words gives.
    public var understanding: Understanding
    /// The top intent, if any.
    public var intent: IntentScore? { understanding.intents.first }
    /// The acoustic confidence the decision used: the transcript's, or for an intent that takes free words
    /// (`Workspace.freeTextIntents`) the margins' alone (`Transcript.marginConfidence`).
    public var acousticConfidence: Double
    public var intentConfidence: Double { understanding.intents.first?.confidence ?? 0 }
    /// The matcher's reading of the second reading's words (`Transcript.secondReading`), when it ran.
    public var secondReading: Understanding?
    /// Both confidences reached their thresholds, and a second reading did not mean another intent.
    public var accepted: Bool
    /// Both confidences reached their thresholds but the second reading's words mean another intent, or none that
    /// reaches the intent threshold: the grammar's sentence may only be the nearest in sound (`SecondReading`).
    public var readsOtherwise = false
    /// The second reading's intent when it reaches the intent threshold (what a rejection names).
    public var secondReadingIntent: String?
}

/// Joins speech to the language engine: a transcript's text goes through the same `Matcher` as typed text
/// (identical words give identical intents and entities), and a command is accepted only when the audio fit
/// the words (acoustic confidence) and the words fit an intent (intent confidence). Both numbers stay
/// visible so a front end can say which one failed.
public struct SpeechUnderstanding: Sendable {
    public let matcher: Matcher
    /// The default minimum acoustic confidence: the calibrated midpoint of `AcousticConfidence.standard`.
    /// Every default threshold (configuration, `recognize`, the hardware check) is this one.
    public static let defaultAcousticThreshold = 0.5

    /// Minimum acoustic confidence; `defaultAcousticThreshold` unless configured.
    public var acousticThreshold: Double
    /// Minimum intent confidence; Watson's reporting threshold by default.
    public var intentThreshold: Double
    /// Intents whose dialog reads the user's own words (`Workspace.freeTextIntents`): the grammar can only approximate
    /// what follows their command words ("announce that the pizza is here" is heard as the nearest example), so
    /// they are not turned away because any English fits the audio better (`RecognitionOptions.anyEnglish`); the
    /// margins alone judge them.
    public var freeTextIntents: Set<String>

    public init(matcher: Matcher, acousticThreshold: Double = defaultAcousticThreshold, intentThreshold: Double = Understanding.reportingThreshold) {
        self.matcher = matcher
        self.acousticThreshold = acousticThreshold
        self.intentThreshold = intentThreshold
        freeTextIntents = matcher.workspace.freeTextIntents
    }

    public init(workspace: Workspace, acousticThreshold: Double = defaultAcousticThreshold, intentThreshold: Double = Understanding.reportingThreshold) {
        self.init(matcher: Matcher(workspace: workspace), acousticThreshold: acousticThreshold, intentThreshold: intentThreshold)
    }

    public func understand(_ transcript: Transcript) -> SpokenCommand {
        let understanding = matcher.understand(transcript.text)
        let intentConfidence = understanding.intents.first?.confidence ?? 0
        var acoustic = transcript.acousticConfidence
        if let top = understanding.intents.first?.intent, freeTextIntents.contains(top), let margins = transcript.marginConfidence {
            acoustic = margins
        }
        let passed = !transcript.text.isEmpty && acoustic >= acousticThreshold && intentConfidence >= intentThreshold
        var command = SpokenCommand(transcript: transcript, understanding: understanding, acousticConfidence: acoustic,
                                    secondReading: transcript.secondReading.map { matcher.understand($0) }, accepted: passed)
        if passed, let reading = command.secondReading {
            command.secondReadingIntent = reading.intents.first.flatMap { $0.confidence >= intentThreshold ? $0.intent : nil }
            if command.secondReadingIntent != command.intent?.intent {
                command.readsOtherwise = true
                command.accepted = false
            }
        }
        return command
    }
}
