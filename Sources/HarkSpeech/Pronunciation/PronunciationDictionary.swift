import Foundation

/// Words and their pronunciations in the CMU dictionary format PocketSphinx reads: one `word PH1 PH2 …`
/// per line, alternates as `word(2)`, phones from `ARPAbet.phones`.
///
/// Load Debian's `/usr/share/pocketsphinx/model/en-us/cmudict-en-us.dict`, then a small custom dictionary
/// (such as `Models/pronunciations.dict`) with `overridden(by:)`; words neither knows can be guessed
/// with an `ESpeakPronouncer`.
public struct PronunciationDictionary: Sendable, Equatable {
    /// Lower-cased word → its pronunciations in file order (`word`, `word(2)`, …).
    public private(set) var entries: [String: [[String]]]

    /// The dictionary shipped with Debian's `pocketsphinx-en-us`.
    public static let systemPath = "/usr/share/pocketsphinx/model/en-us/cmudict-en-us.dict"

    public init() { entries = [:] }

    /// Reads a dictionary file. Malformed lines and unknown phones are errors naming the file and line.
    public init(contentsOf url: URL) throws(PronunciationError) {
        let data: Data
        do { data = try Data(contentsOf: url) } catch {
            throw .unreadable(path: url.path, reason: (error as NSError).localizedDescription)
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw .unreadable(path: url.path, reason: "not UTF-8 text")
        }
        try self.init(parsing: text, source: url.path)
    }

    /// Parses dictionary text; `source` names it in errors. Blank lines and lines starting with `#` or
    /// `;;;` (cmudict's comment style) are skipped. Phones may carry CMU stress digits (`AH0`): the
    /// acoustic model has no stress, so they are dropped.
    public init(parsing text: String, source: String = "dictionary text") throws(PronunciationError) {
        var entries: [String: [[String]]] = [:]
        var lineNumber = 0
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            lineNumber += 1
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" })
            guard let head = fields.first, !head.hasPrefix("#"), !head.hasPrefix(";;;") else { continue }
            let word = Self.baseWord(head)
            guard !word.isEmpty else {
                throw .malformedLine(path: source, line: lineNumber, reason: "no word before \"\(head)\"")
            }
            guard fields.count > 1 else {
                throw .malformedLine(path: source, line: lineNumber, reason: "\"\(head)\" has no phones")
            }
            var phones: [String] = []
            phones.reserveCapacity(fields.count - 1)
            for field in fields.dropFirst() {
                guard let phone = ARPAbet.normalised(field) else {
                    throw .malformedLine(path: source, line: lineNumber,
                                         reason: "\"\(field)\" in \"\(head)\" is not an acoustic-model phone (\(ARPAbet.phones.joined(separator: " ")))")
                }
                phones.append(phone)
            }
            if !(entries[word]?.contains(phones) ?? false) { entries[word, default: []].append(phones) }
        }
        self.entries = entries
    }

    /// The number of distinct words.
    public var count: Int { entries.count }

    /// The pronunciations of `word` (any case); empty if the dictionary lacks it.
    public func pronunciations(of word: String) -> [[String]] {
        entries[word.lowercased()] ?? []
    }

    public func contains(_ word: String) -> Bool { entries[word.lowercased()] != nil }

    /// This dictionary with `custom`'s words replacing ours: a word in `custom` keeps only `custom`'s
    /// pronunciations, so a wrong system entry can be corrected, not merely added to.
    public func overridden(by custom: PronunciationDictionary) -> PronunciationDictionary {
        var result = self
        result.entries.merge(custom.entries) { _, replacement in replacement }
        return result
    }

    /// The dictionary's pronunciations of `word`, or, if it has none, the one `pronouncer` derives.
    public func pronunciations(of word: String, guessingWith pronouncer: ESpeakPronouncer) throws(PronunciationError) -> [[String]] {
        let known = pronunciations(of: word)
        return known.isEmpty ? [try pronouncer.phones(for: word)] : known
    }

    /// `word(2)` → `word`, lower-cased.
    private static func baseWord(_ head: Substring) -> String {
        var word = head
        if word.hasSuffix(")"), let open = word.lastIndex(of: "("),
           word[word.index(after: open)..<word.index(before: word.endIndex)].allSatisfy(\.isNumber) {
            word = word[..<open]
        }
        return word.lowercased()
    }
}
