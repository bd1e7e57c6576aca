import Foundation

/// A spoken word of a written sentence and the Unicode-scalar range of the text it came from.
public struct SpeechToken: Sendable, Equatable {
    /// Lower-cased, as a pronunciation dictionary holds it ("what's", "forward", "ten").
    public var word: String
    /// Unicode-scalar offsets `[start, end)` of the written token the word was read from; a number spelled
    /// out as several words gives each word the number's range.
    public var start: Int
    public var end: Int

    public init(word: String, start: Int, end: Int) {
        self.word = word
        self.start = start
        self.end = end
    }
}

/// Turns written text into the words a recogniser hears: lower-case, punctuation dropped, apostrophes inside
/// words kept ("what's" is one dictionary word, unlike the matcher's "whats"), hyphens split ("twenty-one"),
/// and digits spelled out ("10" → "ten", "3.5" → "three point five", "2nd" → "second").
///
/// Offsets count Unicode scalars, the unit `Mention` and `Tokenizer` use.
public enum SpeechText {
    /// The spoken words of `text`.
    public static func words(_ text: String) -> [String] { tokens(text).map(\.word) }

    /// The spoken words of `text` with where each came from.
    public static func tokens(_ text: String) -> [SpeechToken] {
        var result: [SpeechToken] = []
        let scalars = Array(text.unicodeScalars)
        let n = scalars.count
        var i = 0
        while i < n {
            guard Tokenizer.isWordScalar(scalars[i]) else {
                i += 1
                continue
            }
            let start = i
            var word = String.UnicodeScalarView()
            while i < n {
                let s = scalars[i]
                if Tokenizer.isWordScalar(s) {
                    word.append(Tokenizer.lowercase(s))
                    i += 1
                } else if s == "'" || s == "\u{2019}", i + 1 < n, Tokenizer.isLetter(scalars[i + 1]), i > start,
                    Tokenizer.isLetter(scalars[i - 1])
                {
                    word.append("'")
                    i += 1
                } else if s == "." || s == ",", i + 1 < n, Tokenizer.isDigit(scalars[i + 1]), i > start,
                    Tokenizer.isDigit(scalars[i - 1])
                {
                    word.append(s)
                    i += 1
                } else {
                    break
                }
            }
            for spoken in spell(String(word)) { result.append(SpeechToken(word: spoken, start: start, end: i)) }
        }
        return result
    }

    /// A written token as spoken words: itself unless it holds digits.
    static func spell(_ token: String) -> [String] {
        guard token.unicodeScalars.contains(where: Tokenizer.isDigit) else { return [token] }
        // Split into runs of digits (with their separators) and letters: "2nd" → "2" "nd", "mp3" → "mp" "3".
        var parts: [(text: String, digits: Bool)] = []
        for s in token.unicodeScalars {
            let digit = Tokenizer.isDigit(s) || ((s == "." || s == ",") && parts.last?.digits == true)
            if let last = parts.last, last.digits == digit {
                parts[parts.count - 1].text.unicodeScalars.append(s)
            } else {
                parts.append((String(s), digit))
            }
        }
        var words: [String] = []
        var k = 0
        while k < parts.count {
            let part = parts[k]
            guard part.digits else {
                words.append(part.text)
                k += 1
                continue
            }
            let number = part.text.replacingOccurrences(of: ",", with: "")
            let pieces = number.split(separator: ".", omittingEmptySubsequences: false)
            let suffix = k + 1 < parts.count ? parts[k + 1].text : ""
            if pieces.count == 1, ["st", "nd", "rd", "th"].contains(suffix), let value = Int(number), value < 1_000_000_000 {
                words += ordinal(value)
                k += 2
                continue
            }
            if let whole = pieces.first {
                words += spellDigits(String(whole))
            }
            if pieces.count > 1 {
                words.append("point")
                for d in pieces.dropFirst().joined().unicodeScalars { words += cardinal(Int(d.value - 0x30)) }
            }
            k += 1
        }
        return words
    }

    /// Digits read as a number when they fit, else one by one ("007" → "zero zero seven").
    static func spellDigits(_ digits: String) -> [String] {
        if digits.count > 1, digits.hasPrefix("0") || digits.count > 9 {
            return digits.unicodeScalars.flatMap { cardinal(Int($0.value - 0x30)) }
        }
        guard let value = Int(digits) else { return [] }
        return cardinal(value)
    }

    static let ones = [
        "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
        "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen",
    ]
    static let tens = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
    static let ordinalOnes = [
        "zeroth", "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth",
        "eleventh", "twelfth", "thirteenth", "fourteenth", "fifteenth", "sixteenth", "seventeenth", "eighteenth",
        "nineteenth",
    ]
    static let ordinalTens = ["", "", "twentieth", "thirtieth", "fortieth", "fiftieth", "sixtieth", "seventieth", "eightieth", "ninetieth"]

    /// English words for a non-negative integer below a billion: 1205 → "one thousand two hundred five".
    public static func cardinal(_ value: Int) -> [String] {
        guard value >= 0 else { return ["minus"] + cardinal(-value) }
        if value < 20 { return [ones[value]] }
        if value < 100 { return [tens[value / 10]] + (value % 10 == 0 ? [] : [ones[value % 10]]) }
        if value < 1000 { return [ones[value / 100], "hundred"] + (value % 100 == 0 ? [] : cardinal(value % 100)) }
        if value < 1_000_000 {
            return cardinal(value / 1000) + ["thousand"] + (value % 1000 == 0 ? [] : cardinal(value % 1000))
        }
        return cardinal(value / 1_000_000) + ["million"] + (value % 1_000_000 == 0 ? [] : cardinal(value % 1_000_000))
    }

    /// English ordinal words: 21 → "twenty first".
    public static func ordinal(_ value: Int) -> [String] {
        if value < 20 { return [ordinalOnes[max(0, value)]] }
        if value < 100 {
            return value % 10 == 0 ? [ordinalTens[value / 10]] : [tens[value / 10], ordinalOnes[value % 10]]
        }
        var words = cardinal(value)
        guard let last = words.last else { return words }
        words[words.count - 1] =
            if let i = ones.firstIndex(of: last) { ordinalOnes[i] }
            else if let i = tens.firstIndex(of: last), i >= 2 { ordinalTens[i] }
            else { last + "th" }  // hundredth, thousandth, millionth
        return words
    }
}
