import HarkCore

/// A spoken command understood: what was heard, what the matcher made of the words, and whether to act.
public struct SpokenCommand: Sendable {
    public var transcript: Transcript
    /// The matcher's reading of the words that answer (`text`): exactly what typing the same words gives.
    public var understanding: Understanding
    /// The second reading's words answer rather than the grammar's sentence (`SecondReading.Use.decide`): the reading was
    /// sure of its words and of their intent, and the grammar's sentence meant another intent or was turned away.
    public var decidedByReading = false
    /// The words that answer: the grammar's sentence (`transcript.text`), or the second reading's when it decided.
    public var text: String { decidedByReading ? transcript.secondReading ?? "" : transcript.text }
    /// The top intent, if any.
    public var intent: IntentScore? { understanding.intents.first }
    /// The acoustic confidence the decision used: the transcript's, or for an intent that takes free words
    /// (`Workspace.freeTextIntents`) the margins' alone (`Transcript.marginConfidence`).
    public var acousticConfidence: Double
    public var intentConfidence: Double { understanding.intents.first?.confidence ?? 0 }
    /// The matcher's reading of the second reading's words (`Transcript.secondReading`), when it ran.
    public var secondReading: Understanding?
    /// Both confidences reached their thresholds, the values' words fit (`valuesFitPoorly`), and a second reading did
    /// not mean another intent; or the second reading decided (`decidedByReading`).
    public var accepted: Bool
    /// Both confidences reached their thresholds but the second reading's words mean another intent, or none that
    /// reaches the intent threshold: the grammar's sentence may only be the nearest in sound (`SecondReading`).
    public var readsOtherwise = false
    /// The second reading's intent when it reaches the intent threshold (what a rejection names).
    public var secondReadingIntent: String?
    /// The values of the grammar's sentence (its entities of the workspace's own, `@entity:value`) that the second reading,
    /// meaning the same intent, does not name: the grammar may have heard the nearest-sounding value ("is the oven still
    /// on" as "is the light still on", read "is the you on"). A sure reading that names other values of those entities
    /// answers with them (`SecondReading.namesOtherValues`); otherwise such a command is not run in clean speech, and runs
    /// as heard in moderate noise, where the reading only overrules (`SecondReading.valuesMissing`).
    public var valuesUnread: [String] = []
    /// The margin over the words of the command's values (its entities' words, `Transcript.fit(ofWordsIn:)`), when the
    /// recogniser gave word margins and the understanding found entities in words it heard.
    public var valuesMargin: Double?
    /// How long those words last together, seconds.
    public var valuesSeconds: Double?
    /// Both confidences reached their thresholds but the values' words, lasting long enough to judge, fit the sound
    /// worse than `Transcript.valuesMarginPoint` allows: a near-command heard as the command with the nearest-sounding
    /// values.
    public var valuesFitPoorly = false

    /// Why the command was not accepted, in words: what `hark recognize` prints after "rejected" and the appliance's
    /// `intent` event gives as its reason. Empty for an accepted command.
    public func rejectionReason(acousticThreshold: Double, intentThreshold: Double) -> String {
        if accepted { return "" }
        if transcript.otherSpeech { return OtherSpeech.reason }
        if transcript.otherValue { return OtherValue.reason }
        if transcript.text.isEmpty { return "nothing in the grammar was heard" }
        if readsOtherwise {
            return SecondReading.reason(transcript.secondReading ?? "", intent: secondReadingIntent, without: valuesUnread)
        }
        if valuesFitPoorly, let valuesMargin, let point = transcript.valuesMarginPoint {
            return "the values fit the sound poorly: margin " + Self.format(valuesMargin) + " < " + Self.format(point)
                + " over “" + valueWords.joined(separator: " ") + "”"
        }
        var reasons: [String] = []
        if acousticConfidence < acousticThreshold {
            var reason = "acoustic confidence " + Self.format(acousticConfidence) + " < " + Self.format(acousticThreshold)
            if let english = transcript.turnedAwayAgainstEnglish(threshold: acousticThreshold) {
                reason += " (any English fits better: margin " + Self.format(english) + ")"
            }
            reasons.append(reason)
        }
        if intentConfidence < intentThreshold {
            reasons.append("intent confidence " + Self.format(intentConfidence) + " < " + Self.format(intentThreshold))
        }
        return reasons.isEmpty ? "below the thresholds" : reasons.joined(separator: "; ")
    }

    /// The heard words inside the understanding's entities, in order (what `valuesMargin` averages over).
    public var valueWords: [String] {
        let inside = transcript.words(inside: understanding.entities.map { $0.start..<$0.end }) ?? []
        return inside.map { transcript.words[$0].text }
    }

    /// `x` to three decimals, a whole number without them ("-6", "0.312", "-4.25").
    static func format(_ x: Double) -> String {
        let rounded = (x * 1000).rounded() / 1000
        guard rounded.isFinite, abs(rounded) < 1e15 else { return String(x) }
        return rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)
    }
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
        let passed = !transcript.text.isEmpty && !transcript.otherValue && acoustic >= acousticThreshold && intentConfidence >= intentThreshold
        var command = SpokenCommand(transcript: transcript, understanding: understanding, acousticConfidence: acoustic,
                                    secondReading: transcript.secondReading.map { matcher.understand($0) }, accepted: passed)
        if let top = understanding.intents.first?.intent, !freeTextIntents.contains(top),
           let fit = transcript.fit(ofWordsIn: understanding.entities.map { $0.start..<$0.end }) {
            command.valuesMargin = fit.margin
            command.valuesSeconds = fit.seconds
        }
        // A near-command: the words that carry the values fit badly although the utterance as a whole passed.
        if command.accepted, let point = transcript.valuesMarginPoint, let margin = command.valuesMargin, margin < point,
           let seconds = command.valuesSeconds, seconds >= transcript.valuesMinimumSeconds {
            command.valuesFitPoorly = true
            command.accepted = false
        }
        // A value's place none of the values fits: the reading, which has only the workspace's words, cannot name it
        // either, so it neither answers nor rescues.
        guard let reading = command.secondReading, !transcript.otherValue else { return command }
        command.secondReadingIntent = reading.intents.first.flatMap { $0.confidence >= intentThreshold ? $0.intent : nil }
        // In moderate noise a reading that may decide (it has a confidence only then) only overrules: it neither rescues a
        // sentence turned away (there such rescues let non-commands through) nor stops one it is not sure of (the free
        // search wanders over the noise around a short command, "hey" read "me", and stopping on that cost commands said
        // as written). Docs/speech.md, "The reading in moderate noise".
        let onlyOverrules = transcript.moderateDecoding && transcript.secondReadingConfidence != nil
        // The reading also checks the values: a sentence whose values the reading (meaning the same intent) does not name
        // is treated as one it means otherwise. In moderate noise that lets a sure reading answer with its own values;
        // it stops nothing there.
        if command.accepted, command.secondReadingIntent == command.intent?.intent {
            command.valuesUnread = SecondReading.valuesMissing(from: reading, heard: command.understanding)
        }
        // A reading sure of its words (they fit the sound and read like the workspace's sentences) and of their intent
        // answers when the grammar's sentence meant another intent, named values the reading replaces with others of
        // the same entities, or was turned away (`SecondReading.Use.decide`; the recogniser gives its confidence only
        // then). Over a sentence the grammar's margin accepted, its words must fit the sound clearly better
        // (`betterFit`); in place of one turned away, clearly well (`rescueConfidence`).
        if let readingConfidence = transcript.secondReadingConfidence, readingConfidence >= acousticThreshold,
           let fluency = transcript.secondReadingFluency, fluency >= SecondReading.fluencyPoint,
           let top = reading.intents.first, top.confidence >= max(intentThreshold, SecondReading.intentConfidence),
           !(command.accepted && command.intent?.intent == top.intent)
               || SecondReading.namesOtherValues(reading, for: command.valuesUnread),
           command.accepted ? (transcript.secondReadingMargin ?? 0) <= -SecondReading.betterFit
                            : !onlyOverrules && readingConfidence >= SecondReading.rescueConfidence {
            command.understanding = reading
            command.acousticConfidence = readingConfidence
            command.decidedByReading = true
            command.accepted = true
            command.valuesMargin = nil
            command.valuesSeconds = nil
            command.valuesFitPoorly = false
            return command
        }
        // Otherwise the reading only checks: a grammar's sentence it means otherwise, or whose values it does not name, is
        // not run.
        if command.accepted, !onlyOverrules,
           command.secondReadingIntent != command.intent?.intent || !command.valuesUnread.isEmpty {
            command.readsOtherwise = true
            command.accepted = false
        }
        return command
    }
}
