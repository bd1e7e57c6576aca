import HarkCore

/// A way out of a value's place in the grammar: beside each dictionary entity's values, a loop over the model's
/// context-independent phones, searched together with the values (`SpeechGrammar.withOtherValues()`).
///
/// A near-command says a command's words around a thing the workspace does not have: "turn on the fan", "is the oven
/// still on". The grammar search has no word for the fan, so it hears the value that sounds nearest ("turn on the
/// lamp"), and the margin over the whole utterance passes, since most of it is the command's own words. In the same
/// search, a value's place may instead be taken by free phones, at a price per phone; when those explain the sound
/// better than every value of the entity, the utterance names something the workspace does not know, and the command
/// is not run (docs/speech.md, "A value none of the values fits").
public struct OtherValue: Sendable, Equatable {
    /// The probability the loop gives each phone it goes through, shared among the phones (each gets this over their
    /// number): the lower, the dearer the loop and the worse every value must fit before it wins.
    public var phoneProbability: Double

    public init(phoneProbability: Double) {
        self.phoneProbability = phoneProbability
    }

    /// Why a command whose value's place took the loop is not run, as `hark recognize` and the appliance's `intent`
    /// events say it.
    public static let reason = "none of the workspace's values fits what was said in a value's place"

    /// The loop's words start with this; `SpeechRecognizer.spokenWord` drops every word that starts with "[".
    static let wordPrefix = "[value-"

    /// Whether `word` (a PocketSphinx segment's word) is one of the loop's.
    static func isLoopWord(_ word: String) -> Bool { word.hasPrefix(wordPrefix) }

    /// The loop's words, one a phone ("[value-aa]" is AA).
    static let words = OtherSpeech.phoneWords(prefix: wordPrefix)

    /// The loop's words as dictionary lines.
    static var dictionaryText: String { OtherSpeech.dictionaryText(of: words) }

    /// The loop as `WordAutomaton.fsg(name:loop:otherValue:)` writes it: every word at the phone probability shared
    /// among them.
    var loop: (words: [String], probability: Double) { OtherSpeech.loop(of: Self.words, phoneProbability: phoneProbability) }
}
