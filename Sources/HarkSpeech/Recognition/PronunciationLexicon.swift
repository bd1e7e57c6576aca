import Foundation

/// The pronunciations of just the words a grammar uses, in PocketSphinx dictionary format: a 40-word
/// dictionary loads in a blink and saves memory next to the 135k-word `cmudict-en-us.dict`.
///
/// Each word is looked up in the dictionary file (all its variants: `what's`, `what's(2)`); a word it lacks
/// goes to the pronunciation source. A word neither can pronounce is an error naming every such word: a
/// recogniser that silently cannot hear a word of its own grammar is worse than none.
struct PronunciationLexicon {
    /// `word PHONE PHONE…` lines, variants numbered `word(2)`.
    var entries: [(word: String, phones: [String])]
    /// Words pronounced by the source rather than the dictionary.
    var guessed: [String]

    init(words: [String], dictionary: URL, source: (any PronunciationSource)?) throws(SpeechRecognitionError) {
        let wanted = Set(words)
        var found: [String: [[String]]] = [:]
        let text: String
        do {
            text = try String(contentsOf: dictionary, encoding: .utf8)
        } catch {
            throw .missingModel(what: "readable pronunciation dictionary", path: dictionary.path)
        }
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            guard let space = line.firstIndex(of: " ") else { continue }
            var key = line[..<space]
            if key.last == ")", let paren = key.lastIndex(of: "(") { key = key[..<paren] }
            let word = String(key)
            guard wanted.contains(word) else { continue }
            let phones = line[space...].split(separator: " ").map(String.init)
            // cmudict-en-us marks some lines with a trailing comment ("# place, name"): keep phones only.
            let clean = Array(phones.prefix { !$0.hasPrefix("#") })
            if !clean.isEmpty { found[word, default: []].append(clean) }
        }
        var guessed: [String] = []
        var unknown: [String] = []
        var failures: [String] = []
        for word in words.sorted() where found[word] == nil {
            guard let source else {
                unknown.append(word)
                continue
            }
            do {
                let pronunciations = try source.pronunciations(for: word).filter { !$0.isEmpty }
                if pronunciations.isEmpty {
                    unknown.append(word)
                } else {
                    found[word] = pronunciations
                    guessed.append(word)
                }
            } catch {
                unknown.append(word)
                failures.append("\(word): \(error)")
            }
        }
        guard unknown.isEmpty else {
            let reason = source == nil
                ? "no pronunciation source was given"
                : "the pronunciation source had none" + (failures.isEmpty ? "" : " (" + failures.joined(separator: "; ") + ")")
            throw .unknownWords(unknown, dictionary: dictionary.path, reason: reason)
        }
        entries = words.sorted().flatMap { word in (found[word] ?? []).map { (word, $0) } }
        self.guessed = guessed
    }

    /// The dictionary file text.
    var text: String {
        var seen: [String: Int] = [:]
        var lines: [String] = []
        for (word, phones) in entries {
            let n = seen[word, default: 0] + 1
            seen[word] = n
            lines.append((n == 1 ? word : "\(word)(\(n))") + " " + phones.joined(separator: " "))
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
