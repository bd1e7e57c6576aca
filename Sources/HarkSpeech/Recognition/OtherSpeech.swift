/// A way out of the grammar for speech that is none of the workspace's sentences: a branch from the grammar's
/// start to its end that loops over the model's context-independent phones, searched together with the sentences.
///
/// Without it a grammar search has no rejection: every utterance comes back as the sentence that fits it least
/// badly, and the acoustic margin (against the free phone loop of the confidence pass) is left to tell. On a small
/// grammar that is not enough: the search keeps few hypotheses alive, PocketSphinx scores each frame against the best
/// senone it evaluated, and silence and filler segments absorb the words a sentence lacks, so "who wrote hamlet"
/// comes back as "kill the camera" with a margin a command would have (docs/speech.md, "Speech outside the grammar").
/// In the same search, the branch and the sentences are scored against the same senones; when the branch explains
/// the audio better than every sentence, less the price of its phones, the utterance was something else.
public struct OtherSpeech: Sendable, Equatable {
    /// The probability the branch gives each phone it goes through, shared among the phones (each gets this over
    /// their number): the lower, the dearer the branch and the worse a sentence must fit before the branch wins.
    public var phoneProbability: Double

    public init(phoneProbability: Double) {
        self.phoneProbability = phoneProbability
    }

    /// The setting chosen on tuning data (docs/speech.md, "Speech outside the grammar").
    public static let standard = OtherSpeech(phoneProbability: 1)

    /// Why an utterance that took the branch is not a command, as `hark recognize` and the appliance's `intent`
    /// events say it.
    public static let reason = "speech none of the workspace's sentences fits"

    /// The branch's words start with this, so they are told apart from the workspace's (`SpeechRecognizer.spokenWord`
    /// drops every word that starts with "[").
    static let wordPrefix = "[other-"

    /// The context-independent phones of the en-us model, the branch's words (one each).
    static let phones = [
        "AA", "AE", "AH", "AO", "AW", "AY", "B", "CH", "D", "DH", "EH", "ER", "EY", "F", "G", "HH", "IH", "IY", "JH", "K",
        "L", "M", "N", "NG", "OW", "OY", "P", "R", "S", "SH", "T", "TH", "UH", "UW", "V", "W", "Y", "Z", "ZH",
    ]

    /// Whether `word` (a PocketSphinx segment's word) is one of the branch's.
    static func isBranchWord(_ word: String) -> Bool { word.hasPrefix(wordPrefix) }

    /// The branch's words, one a phone ("[other-aa]" is AA).
    static let words = phoneWords(prefix: wordPrefix)

    /// The branch's words as dictionary lines.
    static var dictionaryText: String { dictionaryText(of: words) }

    /// The branch as `WordAutomaton.fsg(name:loop:)` writes it: every word at the phone probability shared among them.
    var loop: (words: [String], probability: Double) { Self.loop(of: Self.words, phoneProbability: phoneProbability) }

    /// One word per phone, `prefix` + the phone in lower case + "]" (this branch's, and `OtherValue`'s loop's).
    static func phoneWords(prefix: String) -> [String] { phones.map { "\(prefix)\($0.lowercased())]" } }

    /// `phoneWords(prefix:)`'s words as dictionary lines, each pronounced as its phone.
    static func dictionaryText(of words: [String]) -> String {
        zip(words, phones).map { "\($0) \($1)\n" }.joined()
    }

    /// A loop over `words` as the FSG writer takes it: each word at `phoneProbability` shared among the phones.
    static func loop(of words: [String], phoneProbability: Double) -> (words: [String], probability: Double) {
        (words, phoneProbability / Double(phones.count))
    }
}
