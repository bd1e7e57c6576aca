import Foundation

/// The second reading of an utterance (clean, or in moderate noise): the same audio decoded once more with a trigram model of the workspace's
/// sentences (`SpeechGrammar.arpaLanguageModel`), so with the workspace's words in any order rather than only in its
/// sentences (`RecognitionOptions.secondReading`).
///
/// Why: the grammar search can only answer with one of the workspace's sentences, so a command said in other words
/// comes back as the sentence nearest in sound, and that sentence can be another command: "please tell me the time" as
/// "please leave the room", "off with the lights" as "on with the lights". The margin against the phone loop does not
/// catch those, because the nearest sentence fits the sound almost as well as the words said. A trigram search keeps
/// closer to the words said ("please tell me the time", "on with the lights" still, sometimes), and the language engine
/// reads those words as it reads typed text. When the two readings mean different intents, the grammar's answer is not
/// trusted and the command is not run (`SpeechUnderstanding`). Measured in docs/speech.md, "A second reading".
///
/// The trigram reading is only a check: it alone would run more paraphrases, but in the measurement it also accepted
/// more sentences that are no command, and its slots are worse than the grammar's on long orders. It is off by default:
/// the free reading wanders more than the grammar when the sound is poor (home.json's own examples through an 8 kHz
/// channel: 3 of 60 right commands turned away), and it costs a third decoding.
public enum SecondReading {
    /// The search's name in its decoder.
    static let search = "reading"

    /// Why a command whose two readings disagree is not run, as `hark recognize` and the appliance's `intent` events say it.
    public static func reason(_ otherWords: String, intent: String?) -> String {
        "the words could also be “\(otherWords)”, " + (intent.map { "#\($0)" } ?? "no command")
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
