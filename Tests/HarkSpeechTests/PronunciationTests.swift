import Foundation
@testable import HarkSpeech
import Testing
import HarkTestSupport

/// Files the pronunciation tests read: Debian's en-us model and the shared benchmark workspaces.
private enum PronunciationFixtures {
    static let model = URL(fileURLWithPath: "/usr/share/pocketsphinx/model/en-us")
    static let cmudict = URL(fileURLWithPath: PronunciationDictionary.systemPath)
    static let mdef = model.appendingPathComponent("en-us/mdef")

    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    /// `../shared/benchmarks` from the package root; a worktree may sit deeper, so parents are tried too.
    static let benchmarks: URL = {
        var dir = packageRoot
        for _ in 0..<3 {
            dir = dir.deletingLastPathComponent()
            let candidate = dir.appendingPathComponent("shared/benchmarks")
            if FileManager.default.fileExists(atPath: candidate.path) { return candidate }
        }
        return packageRoot.deletingLastPathComponent().appendingPathComponent("shared/benchmarks")
    }()

    /// The system dictionary, parsed once for all tests.
    static let dictionary: Result<PronunciationDictionary, PronunciationError> = Result { () throws(PronunciationError) in
        try PronunciationDictionary(contentsOf: cmudict)
    }

    /// The CI (context-independent) phones of the acoustic model. `mdef` is binary ("BMDF"): after its
    /// header the CI phone names follow as NUL-terminated strings, `+NSN+ +SPN+ AA AE … ZH`.
    static func modelPhones() throws -> Set<String> {
        let bytes = [UInt8](try Data(contentsOf: mdef))
        let strings = bytes.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
        guard let start = strings.firstIndex(where: { $0.hasSuffix("+NSN+") }) else { return [] }
        var phones: Set<String> = []
        for string in strings[start...] {
            let name = string.hasSuffix("+NSN+") ? "+NSN+" : string
            guard name.allSatisfy({ $0.isUppercase || $0 == "+" }), !name.isEmpty else { break }
            phones.insert(name)
        }
        return phones
    }

    /// Words people say to an assistant: the example utterances of the real Watson workspaces
    /// (car-dashboard, bank-simple), ranked by how often they occur, keeping those cmudict has.
    static func commonWords(count: Int, in dictionary: PronunciationDictionary) throws -> [String] {
        var frequency: [String: Int] = [:]
        for name in ["car-dashboard", "bank-simple"] {
            let url = benchmarks.appendingPathComponent("watson-workspaces/\(name).json")
            let json = try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any]
            for intent in json?["intents"] as? [[String: Any]] ?? [] {
                for example in intent["examples"] as? [[String: Any]] ?? [] {
                    let text = (example["text"] as? String ?? "").lowercased()
                    for word in text.split(whereSeparator: { !$0.isLetter && $0 != "'" }) {
                        let word = String(word).trimmingCharacters(in: CharacterSet(charactersIn: "'"))
                        if !word.isEmpty && word.allSatisfy(\.isASCII) && dictionary.contains(word) { frequency[word, default: 0] += 1 }
                    }
                }
            }
        }
        // Ties broken alphabetically so the sample is the same on every run.
        return frequency.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.prefix(count).map(\.key)
    }
}

/// Exact-match share and phone error rate of eSpeak-derived pronunciations against a dictionary.
private struct Agreement: CustomStringConvertible {
    var words = 0
    var exact = 0
    var errors = 0
    var phones = 0
    var misses: [String] = []

    var matchRate: Double { Double(exact) / Double(max(words, 1)) }
    var phoneErrorRate: Double { Double(errors) / Double(max(phones, 1)) }
    var description: String {
        "\(exact)/\(words) exact (\(String(format: "%.1f", matchRate * 100))%), phone error rate \(String(format: "%.1f", phoneErrorRate * 100))%"
    }

    init(words: [String], dictionary: PronunciationDictionary, pronouncer: ESpeakPronouncer) throws {
        for word in words {
            let guess = try pronouncer.phones(for: word)
            let references = dictionary.pronunciations(of: word)
            self.words += 1
            if references.contains(guess) { exact += 1 } else if misses.count < 15 {
                misses.append("\(word): \(guess.joined(separator: " ")) ≠ \(references[0].joined(separator: " "))")
            }
            // Against the closest reference, relative to that reference's length.
            var bestErrors = guess.count
            var bestLength = 1
            for reference in references {
                let errors = Self.distance(guess, reference)
                if errors * bestLength < bestErrors * reference.count || reference == references[0] {
                    bestErrors = errors
                    bestLength = reference.count
                }
            }
            errors += bestErrors
            phones += bestLength
        }
    }

    /// Levenshtein distance in phones.
    private static func distance(_ a: [String], _ b: [String]) -> Int {
        var row = Array(0...b.count)
        for i in a.indices {
            var next = [i + 1]
            for j in b.indices {
                next.append(min(row[j + 1] + 1, next[j] + 1, row[j] + (a[i] == b[j] ? 0 : 1)))
            }
            row = next
        }
        return row[b.count]
    }
}

@Suite("Pronunciations: cmudict and eSpeak NG")
struct PronunciationTests {
    @Test("the 39 ARPAbet phones are exactly the acoustic model's phones, less silence and noise")
    func phoneSetMatchesModel() throws {
        let model = try PronunciationFixtures.modelPhones()
        #expect(model.contains("SIL"))
        #expect(model.subtracting(["SIL", "+NSN+", "+SPN+"]) == ARPAbet.phoneSet)
        #expect(ARPAbet.phones.count == 39)
    }

    @Test("every phone the eSpeak map produces is a model phone")
    func mapIsValid() throws {
        let produced = Set(ESpeakPronouncer.englishUS.values.flatMap { $0 })
        #expect(produced.isSubset(of: ARPAbet.phoneSet))
        #expect(throws: PronunciationError.invalidMapping(phoneme: "a", phone: "AH0")) {
            _ = try ESpeakPronouncer(phonemeMap: ["a": ["AH0"]])
        }
    }

    @Test("Debian's cmudict loads with alternates and no stress digits")
    func loadsSystemDictionary() throws {
        let dictionary = try PronunciationFixtures.dictionary.get()
        #expect(dictionary.count > 100_000)
        #expect(dictionary.pronunciations(of: "hello").contains(["HH", "AH", "L", "OW"]))
        #expect(dictionary.pronunciations(of: "READ").count >= 2, "read has two pronunciations in cmudict")
        #expect(!dictionary.contains("read(2)"))
        #expect(dictionary.pronunciations(of: "zorbulax").isEmpty)
        #expect(dictionary.entries.values.allSatisfy { $0.allSatisfy { $0.allSatisfy(ARPAbet.phoneSet.contains) } })
    }

    @Test("a custom dictionary replaces the system's pronunciations of its words")
    func customOverrides() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("hark-pronunciations-\(UUID().uuidString).dict")
        defer { try? FileManager.default.removeItem(at: url) }
        try """
        # Hark's own words
        hark HH AA1 R K
        tomato T AH0 M AA1 T OW2
        tomato(2) T AH M EY T OW
        zorbulax Z AO R B Y AH L AE K S

        """.write(to: url, atomically: true, encoding: .utf8)
        let custom = try PronunciationDictionary(contentsOf: url)
        #expect(custom.count == 3)
        #expect(custom.pronunciations(of: "Hark") == [["HH", "AA", "R", "K"]], "stress digits are dropped, lookup ignores case")
        let shipped = try PronunciationFixtures.dictionary.get()
        let merged = shipped.overridden(by: custom)
        #expect(merged.pronunciations(of: "tomato") == [["T", "AH", "M", "AA", "T", "OW"], ["T", "AH", "M", "EY", "T", "OW"]])
        #expect(merged.contains("zorbulax"))
        #expect(merged.pronunciations(of: "hello") == shipped.pronunciations(of: "hello"))
    }

    @Test("malformed dictionary lines are errors naming the file, line and problem",
          arguments: [("hello HH AH L OW\nworld W ER L DX\n", 2, "DX"), ("hello\n", 1, "no phones"), ("(2) AH\n", 1, "no word")])
    func malformed(text: String, line: Int, mention: String) {
        // caught(_:_:), not `#expect {} throws: {}`: Swift 6.0.3 (Debian 13) crashes compiling that with a typed throw.
        let error = caught(PronunciationError.self) { try PronunciationDictionary(parsing: text, source: "custom.dict") }
        guard case let .malformedLine(path, reported, _)? = error else {
            Issue.record("expected malformedLine, got \(String(describing: error))")
            return
        }
        #expect(path == "custom.dict" && reported == line)
        #expect("\(error!)".contains(mention) && "\(error!)".hasPrefix("custom.dict:\(line):"), "\(error!)")
    }

    @Test("a missing dictionary file is an error naming it")
    func missingFile() {
        let error = caught(PronunciationError.self) { try PronunciationDictionary(contentsOf: URL(fileURLWithPath: "/nonexistent/words.dict")) }
        guard case let .unreadable(path, _)? = error else {
            Issue.record("expected unreadable, got \(String(describing: error))")
            return
        }
        #expect(path == "/nonexistent/words.dict")
    }

    @Test("made-up and missing words get non-empty, valid phones", arguments: ["zorbulax", "hark", "espressotini", "Hark", "t-shirt"])
    func madeUpWords(word: String) throws {
        let phones = try ESpeakPronouncer().phones(for: word)
        #expect(!phones.isEmpty)
        #expect(phones.allSatisfy(ARPAbet.phoneSet.contains), "\(phones)")
    }

    @Test("known pronunciations come out right")
    func knownWords() throws {
        let pronouncer = try ESpeakPronouncer()
        #expect(try pronouncer.phones(for: "hark") == ["HH", "AA", "R", "K"])
        #expect(try pronouncer.phones(for: "hello") == ["HH", "AH", "L", "OW"])
        #expect(try pronouncer.eSpeakPhonemes(for: "hello") == ["h", "@", "l", "oU"])
    }

    @Test("not one word is an error", arguments: ["", "two words", " "])
    func notAWord(text: String) {
        #expect(throws: PronunciationError.notAWord(text)) { _ = try ESpeakPronouncer().phones(for: text) }
    }

    @Test("an eSpeak phoneme the map lacks is an error naming the word and the phoneme")
    func unmapped() throws {
        var map = ESpeakPronouncer.englishUS
        map["k"] = nil
        let pronouncer = try ESpeakPronouncer(phonemeMap: map)
        let error = caught(PronunciationError.self) { try pronouncer.phones(for: "hark") }
        guard case let .unmappedPhoneme(word, phoneme, _)? = error else {
            Issue.record("expected unmappedPhoneme, got \(String(describing: error))")
            return
        }
        #expect(word == "hark" && phoneme == "k" && "\(error!)".contains("\"k\""))
    }

    @Test("an unknown eSpeak voice is an error")
    func unknownVoice() {
        #expect(throws: PronunciationError.self) { _ = try ESpeakPronouncer(voice: "xx-nonexistent") }
    }

    @Test("the dictionary answers first; eSpeak fills the gaps")
    func fallback() throws {
        let dictionary = try PronunciationFixtures.dictionary.get()
        let pronouncer = try ESpeakPronouncer()
        #expect(try dictionary.pronunciations(of: "read", guessingWith: pronouncer) == dictionary.pronunciations(of: "read"))
        #expect(try dictionary.pronunciations(of: "zorbulax", guessingWith: pronouncer) == [try pronouncer.phones(for: "zorbulax")])
    }

    /// Measured with eSpeak NG 1.51 and Debian's cmudict: 277/300 exact (92.3%), phone error rate 2.1%.
    /// The floors sit below the measurement so a regression in the map fails, an eSpeak data update does not.
    @Test("eSpeak-derived pronunciations of 300 common words mostly match cmudict")
    func commonWordAccuracy() throws {
        let dictionary = try PronunciationFixtures.dictionary.get()
        let words = try PronunciationFixtures.commonWords(count: 300, in: dictionary)
        #expect(words.count == 300)
        let agreement = try Agreement(words: words, dictionary: dictionary, pronouncer: try ESpeakPronouncer())
        print("common words: \(agreement); misses include \(agreement.misses.joined(separator: "; "))")
        #expect(agreement.matchRate >= 0.85, "\(agreement)")
        #expect(agreement.phoneErrorRate <= 0.05, "\(agreement)")
    }

    /// Measured: 170/300 exact (56.7%), phone error rate 11.1%: names follow no letter-to-sound rules.
    @Test("eSpeak-derived pronunciations of 300 words sampled evenly through cmudict (mostly names)")
    func cmudictSampleAccuracy() throws {
        let dictionary = try PronunciationFixtures.dictionary.get()
        let plain = dictionary.entries.keys.filter { $0.allSatisfy { $0.isASCII && $0.isLetter } }.sorted()
        let words = stride(from: 0, to: plain.count, by: plain.count / 300).prefix(300).map { plain[$0] }
        let agreement = try Agreement(words: Array(words), dictionary: dictionary, pronouncer: try ESpeakPronouncer())
        print("cmudict sample: \(agreement)")
        #expect(agreement.matchRate >= 0.50, "\(agreement)")
        #expect(agreement.phoneErrorRate <= 0.14, "\(agreement)")
    }
}
