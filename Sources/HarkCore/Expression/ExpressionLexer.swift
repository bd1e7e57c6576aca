import Foundation

enum ExpressionTokenKind: Equatable, Sendable {
    case number(Double)
    case string(String)
    case identifier(String)
    /// `#name`
    case intent(String)
    /// `@name`, or `@name:value` when `test` is set.
    case entity(String, test: String?)
    /// `$name`, `$(name)`, or `$name:value` when `test` is set.
    case variable(String, test: String?)
    /// Punctuation and operators, word operators already mapped to their symbols (`and` → `&&`).
    case symbol(String)
    case end
}

struct ExpressionToken: Sendable {
    var kind: ExpressionTokenKind
    var offset: Int
}

/// Characters allowed in `$variable`, `@entity` and `#intent` names.
@inline(__always) func isNameStart(_ c: Character) -> Bool { c.isLetter || c == "_" }
@inline(__always) func isNameChar(_ c: Character) -> Bool { c.isLetter || c.isNumber || c == "_" }

/// Where a sigil name starting at `start` ends: letters, digits and `_`, plus `-` when a letter or `_`
/// follows it (so `@sys-number` and `$card-type` are names while `$count-1` is a subtraction). With
/// `allowDot`, `.` between name characters too (Watson allows dots in intent names). Shared by the
/// expression lexer and output-text templates so both read names alike.
func nameEnd(in chars: [Character], from start: Int, allowDot: Bool) -> Int {
    var pos = start
    while pos < chars.count {
        let c = chars[pos]
        let next: Character? = pos + 1 < chars.count ? chars[pos + 1] : nil
        if isNameChar(c) {
            pos += 1
        } else if c == "-", let n = next, isNameStart(n) {
            pos += 1
        } else if allowDot, c == ".", let n = next, isNameChar(n) {
            pos += 1
        } else {
            break
        }
    }
    return pos
}

/// Turns an expression into tokens. Offsets count `Character`s from the start of the source.
struct ExpressionLexer {
    let chars: [Character]
    let source: String
    var pos = 0

    init(_ source: String) {
        self.source = source
        self.chars = Array(source)
    }

    func error(_ message: String, at offset: Int) -> ExpressionError {
        ExpressionError(message: "\(message) at offset \(offset)", source: source, offset: offset)
    }

    func peek(_ k: Int = 0) -> Character? { pos + k < chars.count ? chars[pos + k] : nil }

    /// A sigil name: see `nameEnd(in:from:allowDot:)`.
    mutating func scanName(allowDot: Bool) -> String {
        let start = pos
        pos = nameEnd(in: chars, from: pos, allowDot: allowDot)
        return String(chars[start..<pos])
    }

    /// The value after `@entity:` / `$var:` — `(any text but ')')` or a run of name characters (digits with
    /// a decimal point allowed).
    mutating func scanTestValue() throws(ExpressionError) -> String? {
        guard peek() == ":" , let n = peek(1) else { return nil }
        if n == "(" {
            let open = pos + 1
            pos += 2
            let start = pos
            while let c = peek(), c != ")" { pos += 1 }
            guard peek() == ")" else { throw error("expected ')' to close the value opened", at: open) }
            let value = String(chars[start..<pos]).trimmingWhitespace()
            pos += 1
            return value
        }
        guard isNameChar(n) else { return nil }
        pos += 1
        let start = pos
        while let c = peek() {
            if isNameChar(c) || c == "-" {
                pos += 1
            } else if c == ".", let n = peek(1), n.isNumber, pos > start, chars[pos - 1].isNumber {
                pos += 1
            } else {
                break
            }
        }
        return String(chars[start..<pos])
    }

    mutating func tokenize() throws(ExpressionError) -> [ExpressionToken] {
        var tokens: [ExpressionToken] = []
        while true {
            while let c = peek(), c.isWhitespace { pos += 1 }
            let start = pos
            guard let c = peek() else {
                tokens.append(ExpressionToken(kind: .end, offset: pos))
                return tokens
            }
            let kind: ExpressionTokenKind
            switch c {
            case "'", "\"":
                kind = .string(try scanString(quote: c))
            case _ where c.isASCII && c.isNumber:
                kind = .number(scanNumber())
            case ".":
                if let n = peek(1), n.isASCII, n.isNumber {
                    kind = .number(scanNumber())
                } else if let n = peek(1), "!?^$".contains(n), peek(2) == "[" {
                    pos += 2
                    kind = .symbol("." + String(n))
                } else {
                    pos += 1
                    kind = .symbol(".")
                }
            case "#":
                pos += 1
                guard let n = peek(), isNameChar(n) else {
                    // `#this` and `#root` fall here too when written as identifiers; plain `#` is an error.
                    throw error("expected an intent name after '#'", at: start)
                }
                let name = scanName(allowDot: true)
                kind = name == "this" ? .identifier("#this") : .intent(name)
            case "@":
                pos += 1
                guard let n = peek(), isNameChar(n) else { throw error("expected an entity name after '@'", at: start) }
                let name = scanName(allowDot: false)
                kind = .entity(name, test: try scanTestValue())
            case "$":
                pos += 1
                if peek() == "(" {
                    pos += 1
                    let s = pos
                    while let c = peek(), c != ")" { pos += 1 }
                    guard peek() == ")" else { throw error("expected ')' after the variable name", at: start) }
                    let name = String(chars[s..<pos])
                    pos += 1
                    kind = .variable(name, test: try scanTestValue())
                } else {
                    guard let n = peek(), isNameChar(n) else {
                        throw error("expected a variable name after '$'", at: start)
                    }
                    let name = scanName(allowDot: false)
                    kind = .variable(name, test: try scanTestValue())
                }
            case _ where isNameStart(c):
                while let c = peek(), isNameChar(c) { pos += 1 }
                let word = String(chars[start..<pos])
                switch word.lowercased() {
                case "and": kind = .symbol("&&")
                case "or": kind = .symbol("||")
                case "not": kind = .symbol("!")
                case "eq": kind = .symbol("==")
                case "ne": kind = .symbol("!=")
                case "lt": kind = .symbol("<")
                case "le": kind = .symbol("<=")
                case "gt": kind = .symbol(">")
                case "ge": kind = .symbol(">=")
                case "div": kind = .symbol("/")
                case "mod": kind = .symbol("%")
                case "matches" where !(tokens.last.map { $0.kind == .symbol(".") || $0.kind == .symbol("?.") } ?? false):
                    kind = .symbol("matches")
                default: kind = .identifier(word)
                }
            default:
                let two = peek(1).map { String(c) + String($0) } ?? ""
                if ["&&", "||", "==", "!=", "<=", ">=", "?.", "?:"].contains(two) {
                    pos += 2
                    kind = .symbol(two)
                } else if "()[]{},?:!<>+-*/%^=".contains(c) {
                    pos += 1
                    // A single `=` is read as `==`: IBM's own examples write `@airport = "JFK"` as a condition.
                    kind = .symbol(c == "=" ? "==" : String(c))
                } else if c == "&" || c == "|" {
                    throw error("unexpected '\(c)' (did you mean '\(c)\(c)'?)", at: start)
                } else {
                    throw error("unexpected '\(c)'", at: start)
                }
            }
            tokens.append(ExpressionToken(kind: kind, offset: start))
        }
    }

    /// SpEL strings: `'it''s'` doubles the quote; Watson exports also use backslash escapes (`\\d` in regexes
    /// arrives as `\d` after JSON decoding and must stay a backslash, so only `\'` and `\"` are unescaped).
    mutating func scanString(quote: Character) throws(ExpressionError) -> String {
        let start = pos
        pos += 1
        var out = ""
        while true {
            guard let c = peek() else { throw error("unterminated string", at: start) }
            pos += 1
            if c == quote {
                if peek() == quote {
                    out.append(quote)
                    pos += 1
                    continue
                }
                return out
            }
            if c == "\\", let n = peek(), n == quote {
                out.append(n)
                pos += 1
                continue
            }
            out.append(c)
        }
    }

    mutating func scanNumber() -> Double {
        let start = pos
        while let c = peek(), c.isASCII, c.isNumber { pos += 1 }
        if peek() == ".", let n = peek(1), n.isASCII, n.isNumber {
            pos += 1
            while let c = peek(), c.isASCII, c.isNumber { pos += 1 }
        }
        if let e = peek(), e == "e" || e == "E" {
            var k = 1
            if let s = peek(1), s == "+" || s == "-" { k = 2 }
            if let d = peek(k), d.isASCII, d.isNumber {
                pos += k
                while let c = peek(), c.isASCII, c.isNumber { pos += 1 }
            }
        }
        let text = String(chars[start..<pos])
        // Java literal suffixes: 5000000000L, 2.5d, 1.5f.
        if let s = peek(), "lLdDfF".contains(s), !(peek(1).map(isNameChar) ?? false) { pos += 1 }
        return Double(text) ?? 0
    }
}
