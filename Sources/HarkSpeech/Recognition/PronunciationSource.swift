/// Pronounces words a dictionary does not hold (e.g. eSpeak NG's letter-to-sound rules mapped to CMU
/// phones), so a workspace may use names and new words.
public protocol PronunciationSource {
    /// Pronunciations of `word` as CMU phone lists (`[["HH", "AH", "L", "OW"]]`); empty when it has none.
    func pronunciations(for word: String) throws -> [[String]]
}
