import Foundation
import HarkCore

/// The second reading of an utterance (clean, or in moderate noise): the same audio decoded once more with a trigram model of the workspace's
/// sentences (`SpeechGrammar.arpaLanguageModel`), so with the workspace's words in any order rather than only in its
/// sentences (`RecognitionOptions.secondReading`).
///
/// Why: the grammar search can only answer with one of the workspace's sentences, so a command said in other words
/// comes back as the sentence nearest in sound, and that sentence can be another command: "please tell me the time" as
/// "please leave the room", "off with the lights" as "on with the lights". The margin against the phone loop does not
/// catch those, because the nearest sentence fits the sound almost as well as the words said. A trigram search keeps
/// closer to the words said ("please tell me the time", "on with the lights" still, sometimes), and the language engine
/// reads those words as it reads typed text. When the two readings mean different intents, or the same intent but the
/// reading does not name the grammar's values (`valuesMissing`), the grammar's answer is not trusted and the command is
/// not run (`SpeechUnderstanding`). Measured in docs/speech.md, "A second reading" and "The reading checks the values".
///
/// What the reading may do (`Use`). By default (`.decide`, clean speech and moderate noise) it also answers: when it is sure of its
/// words (their margin against the phone loop passes the acoustic point, and they read as a sentence of the workspace's
/// kind, `fluencyPoint`) and of their intent (`intentConfidence`), its intent is the one run, whether the grammar's
/// sentence meant another or was turned away; a reading that is not that sure can still only stop the grammar's answer.
/// Alone it would run more sentences that are no command (its words wander when the sound is poor: the free trigram
/// fits nearly anything), which is why it needs both tests; measured in docs/speech.md, "A second reading decides".
/// In moderate noise the reading only overrules: sure by the same tests (through that decoder's calibration), it answers
/// in place of a sentence the grammar accepted; it neither answers in place of one turned away (there such rescues let
/// non-commands through) nor stops one it is not sure of (the free search wanders over the noise around a short command,
/// "hey" read "me", and stopping on that cost commands said as written). Docs/speech.md, "The reading in moderate noise".
/// Noisy speech (below the moderate band) and streaming decoding have no reading.
/// It costs a decoding beside the grammar's, about 1.7 times the processor time of a command.
public enum SecondReading {
    /// How the second reading is used (`RecognitionOptions.secondReading`).
    public enum Use: String, Sendable, Equatable, CaseIterable {
        /// No second reading.
        case off
        /// Clean speech and speech in moderate noise: a command whose two readings mean different intents, or the same one
        /// without some of the grammar's values, is not run.
        case check
        /// Clean speech: a reading sure of its words and their intent is the answer, and otherwise as `check` (the
        /// default). In moderate noise it only overrules: a sure reading answers in place of a sentence the grammar
        /// accepted, and nothing else changes.
        case decide
    }

    /// The least confidence the reading's top intent needs to be the answer (`Use.decide`).
    public static let intentConfidence = 0.9
    /// The least mean log10 probability per word (the sentence's end counted as a word) the reading's words need under
    /// the workspace's trigram model to be the answer: sentences of the workspace and near paraphrases read -0.5 to
    /// -2, word salads the free search strings together from a non-command ("take a day grab") lower. Chosen on tuning
    /// sets only (docs/speech.md, "A second reading decides").
    public static let fluencyPoint = -2.0

    /// How much better per frame than the grammar's sentence (`Transcript.secondReadingMargin`, negative when the
    /// reading fits better) the reading's words must fit the sound to answer in place of a sentence the grammar's margin
    /// accepted: a reading of nearly the same fit is as likely wrong as the grammar ("switch the lamp off please" read
    /// "switch the lamp on for me", 0.08 better). Chosen on tuning sets only.
    public static let betterFit = 0.25
    /// The least acoustic confidence of the reading's own words (through the usual calibration: 0.75 is a margin of
    /// about -2.56 against the phone loop) to answer in place of a sentence the grammar turned away, in clean speech
    /// only. Near-commands the grammar turns away are read near -3.0 as often as commands are. Chosen on tuning sets only.
    public static let rescueConfidence = 0.75

    /// The search's name in its decoder.
    static let search = "reading"

    /// Why a command whose two readings disagree is not run, as `hark recognize` and the appliance's `intent` events say it:
    /// the reading's words, and what they mean instead (another intent, none, or the same one without some of the values).
    public static func reason(_ otherWords: String, intent: String?, without values: [String] = []) -> String {
        "the words could also be “\(otherWords)”, " + (intent.map { "#\($0)" } ?? "no command")
            + (values.isEmpty ? "" : " without " + values.joined(separator: ", "))
    }

    /// The values of `heard` (the grammar's sentence understood) that `reading` does not name, as `@entity:value`, in the
    /// order heard: entities of the workspace's own only. System entities are left out: a reading that wanders over a
    /// number or a time is not evidence that the grammar misheard one, and two clocks' "now" differ.
    ///
    /// Why: when both readings mean the same intent the check passes, yet the grammar may have put the nearest-sounding
    /// value of the workspace where the speaker said something it does not know ("is the oven still on" heard as "is the
    /// light still on", read "is the you on"; "connect to the guest network" as "… the guest room please"), or a
    /// wrong one it knows ("please turn the lights on" heard as "picture camera on", read right). Measured on tuning sets
    /// and commands in docs/speech.md, "The reading checks the values".
    public static func valuesMissing(from reading: Understanding, heard: Understanding) -> [String] {
        let read = Set(reading.entities.filter { !$0.entity.hasPrefix("sys-") }.map { "@\($0.entity):\($0.value)" })
        var missing: [String] = []
        for entity in heard.entities where !entity.entity.hasPrefix("sys-") {
            let name = "@\(entity.entity):\(entity.value)"
            if !read.contains(name), !missing.contains(name) { missing.append(name) }
        }
        return missing
    }

    /// Whether `reading` names another value for every entity of `missing` (`valuesMissing`'s `@entity:value`s), and so
    /// offers a command of its own to answer with, not the grammar's command less its values: "please turn the lights on"
    /// for the grammar's "picture camera on" does ("@device:light" for "@device:camera"); "is the to on" for "is the light
    /// still on" names no device, and only checks. False when nothing is missing.
    public static func namesOtherValues(_ reading: Understanding, for missing: [String]) -> Bool {
        guard !missing.isEmpty else { return false }
        let entities = Set(reading.entities.map { "@\($0.entity):" })
        return missing.allSatisfy { value in entities.contains { value.hasPrefix($0) } }
    }
}

/// The second reading run beside the grammar and phone-loop passes, on a thread of its own (`decodeWhole`).
/// @unchecked Sendable: the decoder is touched only by the pass's thread until `wait()` returns.
final class SecondReadingPass: @unchecked Sendable {
    private let decoder: PocketSphinxDecoder
    private let audio: [Int16]
    private let background: [Int16]
    private var work: BackgroundWork<(words: String, score: Double?)>?

    init(decoder: PocketSphinxDecoder, audio: [Int16], background: [Int16]) {
        self.decoder = decoder
        self.audio = audio
        self.background = background
    }

    func start() {
        work = BackgroundWork { [self] in
            try decoder.decodeUtterance(audio, background: background)
            return (SpeechRecognizer.spokenText(decoder.hypothesis()?.text), SpeechRecognizer.pathScore(of: decoder, lattice: true))
        }
    }

    /// The words read (empty: none) with the path's acoustic score per frame, and the processor seconds it took.
    func wait() -> (read: Result<(words: String, score: Double?), any Error>, cpuSeconds: Double) {
        guard let work else { return (.success(("", nil)), 0) }
        let done = work.wait()
        return (done.result, done.cpuSeconds)
    }
}
