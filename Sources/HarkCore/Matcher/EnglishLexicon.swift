import Foundation

/// The words English knows well: a general prior for the matcher's confidence.
///
/// A word that no example of the workspace uses says something different depending on what it is. If English
/// knows it well ("score", "milk", "wrote"), the sentence is probably about something the workspace does not
/// cover; if English does not know it (a typo, a band, a product name), it is more likely a name slotted into a
/// command the workspace does cover ("play jude"). `ConfidenceModel` weighs the two kinds separately.
///
/// The list is SCOWL's size-35 American English list as Debian ships it in `wamerican-small`
/// (`/usr/share/dict/american-english-small`, about 40,000 lower-case words with their inflections; SCOWL's
/// licence is in `/usr/share/doc/wamerican-small/copyright`). Capitalised entries are names and are left out,
/// as are possessives. `HARK_LEXICON` points at another list of the same form (one word a line).
public struct EnglishLexicon: Sendable {
    public static let defaultPath = "/usr/share/dict/american-english-small"

    let words: Set<String>
    /// The file the words came from, or why there are none.
    public let source: String
    public let isAvailable: Bool

    /// The lexicon every matcher uses, read once on first use (about 20 ms).
    public static let shared: EnglishLexicon = {
        let path = ProcessInfo.processInfo.environment["HARK_LEXICON"].flatMap { $0.isEmpty ? nil : $0 } ?? defaultPath
        return EnglishLexicon(path: path)
    }()

    public init(path: String) {
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8) ?? String(data: data, encoding: .isoLatin1) else {
            self.init(words: [], source: "\(path): cannot read the English word list (install Debian's wamerican-small, or set HARK_LEXICON); "
                    + "every unknown word is then weighed as a name, so out-of-scope sentences are rejected less often")
            return
        }
        self.init(words: text.split(whereSeparator: \.isNewline).map(String.init), source: path)
        if !isAvailable { self.init(words: [], source: "\(path): no lower-case words in the English word list") }
    }

    /// A lexicon from a list of words; capitalised words and possessives are skipped.
    public init(words list: [String], source: String = "(list)") {
        var set: Set<String> = []
        set.reserveCapacity(list.count)
        for w in list {
            guard let first = w.unicodeScalars.first, !(first.properties.isUppercase), !w.contains("'") else { continue }
            set.insert(w)
        }
        words = set
        self.source = source
        isAvailable = !set.isEmpty
    }

    /// Whether English knows the word (in the form given, or as the light stem the tokenizer makes).
    public func contains(_ word: String, stem: String) -> Bool {
        words.contains(word) || words.contains(stem)
    }
}
