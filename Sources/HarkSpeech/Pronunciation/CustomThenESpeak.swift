import Foundation

/// Pronounces the words the system dictionary lacks: first a custom dictionary (`Models/pronunciations.dict`,
/// hand-checked entries), then eSpeak NG's letter-to-sound rules mapped to ARPAbet. This is what the CLI
/// hands a `SpeechRecognizer`, so a workspace may use names and new words without a silent failure.
public struct CustomThenESpeak: PronunciationSource {
    public let custom: PronunciationDictionary
    public let pronouncer: ESpeakPronouncer

    /// - Parameter customDictionary: a CMU-format file; nil for none. A missing or malformed file is an
    ///   error naming it (and the line), not a silently empty dictionary.
    public init(customDictionary: URL?) throws(PronunciationError) {
        custom = try customDictionary.map { url throws(PronunciationError) in try PronunciationDictionary(contentsOf: url) } ?? PronunciationDictionary()
        pronouncer = try ESpeakPronouncer()
    }

    public func pronunciations(for word: String) throws -> [[String]] {
        try custom.pronunciations(of: word, guessingWith: pronouncer)
    }
}
