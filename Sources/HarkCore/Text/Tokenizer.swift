import Foundation

/// A word of the input: its normalised form and where it stands in the original text.
public struct Token: Sendable, Equatable {
    /// Lower-cased, accents kept, apostrophes removed ("What's" → "whats").
    public var text: String
    /// The stem used for features ("lights" → "light", "switching" → "switch").
    public var stem: String
    /// Unicode-scalar offsets `[start, end)` into the original text.
    public var start: Int
    public var end: Int
}

/// Splits text into words with their offsets.
///
/// Words are runs of letters and digits; an apostrophe inside a word joins it ("don't" → "dont"), and a
/// decimal point or comma between digits keeps a number whole ("3.5", "1,000"). Offsets count Unicode
/// scalars, the unit Watson's `location` uses for the texts it handles.
public enum Tokenizer {
    public static func tokenize(_ text: String) -> [Token] {
        var tokens: [Token] = []
        let scalars = Array(text.unicodeScalars)
        var i = 0
        let n = scalars.count
        while i < n {
            guard isWordScalar(scalars[i]) else {
                i += 1
                continue
            }
            let start = i
            var word = String.UnicodeScalarView()
            while i < n {
                let s = scalars[i]
                if isWordScalar(s) {
                    word.append(lowercase(s))
                    i += 1
                } else if (s == "'" || s == "\u{2019}"), i + 1 < n, isLetter(scalars[i + 1]), i > start, isLetter(scalars[i - 1]) {
                    i += 1  // apostrophe inside a word: drop it, keep the word whole
                } else if (s == "." || s == ","), i + 1 < n, isDigit(scalars[i + 1]), i > start, isDigit(scalars[i - 1]) {
                    word.append(s)
                    i += 1
                } else {
                    break
                }
            }
            let w = String(word)
            tokens.append(Token(text: w, stem: stem(w), start: start, end: i))
        }
        return tokens
    }

    @inline(__always) static func isWordScalar(_ s: Unicode.Scalar) -> Bool {
        if s.isASCII {
            let v = s.value
            return (v >= 0x30 && v <= 0x39) || (v >= 0x41 && v <= 0x5A) || (v >= 0x61 && v <= 0x7A)
        }
        return s.properties.isAlphabetic || s.properties.numericType != nil
    }

    @inline(__always) static func isLetter(_ s: Unicode.Scalar) -> Bool {
        if s.isASCII { return (s.value >= 0x41 && s.value <= 0x5A) || (s.value >= 0x61 && s.value <= 0x7A) }
        return s.properties.isAlphabetic
    }

    @inline(__always) static func isDigit(_ s: Unicode.Scalar) -> Bool { s.value >= 0x30 && s.value <= 0x39 }

    @inline(__always) static func lowercase(_ s: Unicode.Scalar) -> Unicode.Scalar {
        if s.value >= 0x41 && s.value <= 0x5A { return Unicode.Scalar(s.value + 32)! }
        if s.isASCII { return s }
        let lower = s.properties.lowercaseMapping.unicodeScalars
        return lower.count == 1 ? lower.first! : s
    }

    /// A light English stemmer: plural and common verb endings only, so that "lights"/"light" and
    /// "switching"/"switch" share a feature without the over-merging of a full Porter stemmer.
    public static func stem(_ word: String) -> String {
        let u = Array(word.utf8)
        let n = u.count
        guard n > 3, u.allSatisfy({ $0 >= 0x61 && $0 <= 0x7A }) else { return word }
        func ends(_ suffix: String) -> Bool {
            let s = Array(suffix.utf8)
            return n > s.count && u[(n - s.count)...].elementsEqual(s)
        }
        func cut(_ k: Int, add: String = "") -> String { String(decoding: u[0..<(n - k)], as: UTF8.self) + add }
        if ends("ies"), n > 4 { return cut(3, add: "y") }
        if ends("sses") { return cut(2) }
        if ends("ss") || ends("us") || ends("is") { return word }
        if ends("ing"), n > 5 {
            let base = Array(u[0..<(n - 3)])
            // "running" → "run": undouble a final consonant pair.
            if base.count > 2, base[base.count - 1] == base[base.count - 2], !"lsz".utf8.contains(base[base.count - 1]) {
                return String(decoding: base.dropLast(), as: UTF8.self)
            }
            return String(decoding: base, as: UTF8.self)
        }
        if ends("ed"), n > 4, !ends("eed") {
            let base = Array(u[0..<(n - 2)])
            if base.count > 2, base[base.count - 1] == base[base.count - 2], !"lsz".utf8.contains(base[base.count - 1]) {
                return String(decoding: base.dropLast(), as: UTF8.self)
            }
            return String(decoding: base, as: UTF8.self)
        }
        if ends("s"), !ends("ss") { return cut(1) }
        return word
    }

    /// English function words: frequent everywhere, so they say little about whether a sentence is in domain.
    public static let functionWords: Set<String> = [
        "a", "an", "the", "this", "that", "these", "those", "some", "any", "my", "your", "our", "their", "his", "her", "its",
        "i", "me", "you", "we", "us", "they", "them", "he", "she", "it", "im", "ive", "id", "ill", "youre", "were", "theyre",
        "is", "am", "are", "was", "be", "been", "being", "do", "does", "did", "have", "has", "had", "will", "would", "can",
        "could", "should", "shall", "may", "might", "must", "please", "pls", "plz", "kindly", "just", "now", "right", "then",
        "so", "and", "or", "but", "if", "of", "to", "for", "in", "at", "by", "with", "from", "about", "as", "into", "up",
        "out", "there", "here", "what", "whats", "which", "who", "how", "when", "where", "why", "hey", "ok", "okay", "oh",
        "well", "yes", "no", "not", "dont", "cant", "wont", "isnt", "arent", "very", "really", "too", "also", "again",
        "want", "wanna", "like", "need", "let", "lets", "go", "get", "got", "make", "give", "tell", "know", "think",
        "thing", "one", "all", "more", "much", "bit", "little", "hark", "computer", "assistant",
    ]
}
