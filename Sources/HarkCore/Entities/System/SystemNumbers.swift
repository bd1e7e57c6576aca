import Foundation

/// A number read from the tokens, kept as canonical decimal text so huge values never overflow.
struct SysNumber {
    var intDigits: String  // no leading zeros, "0" for zero
    var fracDigits: String  // no trailing zeros
    var negative: Bool
    var ordinal: Bool
    var spelled: Bool
    /// Token index just past the number.
    var end: Int

    /// Watson's value form: "25", "3.5", "-4", "1000".
    var text: String {
        var s = negative && !(intDigits == "0" && fracDigits.isEmpty) ? "-" : ""
        s += intDigits
        if !fracDigits.isEmpty { s += "." + fracDigits }
        return s
    }

    var double: Double { Double(text) ?? 0 }
    var isInteger: Bool { fracDigits.isEmpty }
    /// The value when it is a small non-negative integer (hours, days, counts).
    var small: Int? {
        guard fracDigits.isEmpty, !negative, intDigits.utf8.count <= 9 else { return nil }
        return Int(intDigits)
    }

    init(intDigits: String, fracDigits: String = "", negative: Bool = false, ordinal: Bool = false,
         spelled: Bool = false, end: Int)
    {
        var i = Substring(intDigits)
        while i.count > 1, i.first == "0" { i = i.dropFirst() }
        var f = Substring(fracDigits)
        while f.last == "0" { f = f.dropLast() }
        self.intDigits = i.isEmpty ? "0" : String(i)
        self.fracDigits = String(f)
        self.negative = negative
        self.ordinal = ordinal
        self.spelled = spelled
        self.end = end
    }
}

/// Formats a double the way Watson prints numbers: integers without a fraction.
func sysFormat(_ d: Double) -> String {
    if d.isFinite, d == d.rounded(), abs(d) < 1e15 { return String(Int(d)) }
    return "\(d)"
}

enum SysWord {
    case unit(Int)  // 0...9
    case teen(Int)  // 10...19
    case tens(Int)  // 20, 30, ... 90
    case hundred
    case scale(Int)  // 1_000, 1_000_000, ...
}

let sysNumberWords: [String: (word: SysWord, ordinal: Bool)] = {
    var d: [String: (word: SysWord, ordinal: Bool)] = [:]
    let units = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
    for (v, w) in units.enumerated() { d[w] = (.unit(v), false) }
    let teens = ["ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen",
                 "nineteen"]
    for (v, w) in teens.enumerated() { d[w] = (.teen(v + 10), false) }
    let tens = ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
    for (v, w) in tens.enumerated() { d[w] = (.tens((v + 2) * 10), false) }
    d["fourty"] = (.tens(40), false)
    d["hundred"] = (.hundred, false)
    d["thousand"] = (.scale(1_000), false)
    d["million"] = (.scale(1_000_000), false)
    d["billion"] = (.scale(1_000_000_000), false)
    d["trillion"] = (.scale(1_000_000_000_000), false)
    let ordUnits = ["zeroth", "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth"]
    for (v, w) in ordUnits.enumerated() { d[w] = (.unit(v), true) }
    let ordTeens = ["tenth", "eleventh", "twelfth", "thirteenth", "fourteenth", "fifteenth", "sixteenth",
                    "seventeenth", "eighteenth", "nineteenth"]
    for (v, w) in ordTeens.enumerated() { d[w] = (.teen(v + 10), true) }
    let ordTens = ["twentieth", "thirtieth", "fortieth", "fiftieth", "sixtieth", "seventieth", "eightieth",
                   "ninetieth"]
    for (v, w) in ordTens.enumerated() { d[w] = (.tens((v + 2) * 10), true) }
    d["hundredth"] = (.hundred, true)
    d["thousandth"] = (.scale(1_000), true)
    d["millionth"] = (.scale(1_000_000), true)
    return d
}()

extension SysScanner {
    /// A number starting at token `i`: digits ("1,000.5", "21st") or words ("a hundred and three").
    func number(at i: Int) -> SysNumber? {
        guard i < n else { return nil }
        let t = toks[i]
        switch t.kind {
        case .digits: return digitNumber(at: i).map(scaled)
        case .word:
            if t.text == "minus" || t.text == "negative", i + 1 < n, toks[i + 1].kind != .word || sysNumberWords[toks[i + 1].text] != nil,
               var v = number(at: i + 1), !v.ordinal
            {
                v.negative.toggle()
                return v
            }
            return spelledNumber(at: i).map(scaled)
        case .symbol:
            // "-4", but not the dash of "1-2".
            if t.text == "-", i + 1 < n, toks[i + 1].kind == .digits, !toks[i + 1].spaceBefore,
               i == 0 || t.spaceBefore || toks[i - 1].kind == .symbol
            {
                guard var v = digitNumber(at: i + 1), !v.ordinal else { return nil }
                v.negative = true
                return v
            }
            return nil
        case .other: return nil
        }
    }

    /// "1.5 million", "2 hundred", "one point five billion": a digit or decimal number times a scale word.
    /// (Spelled integers take their scale words themselves.)
    func scaled(_ v: SysNumber) -> SysNumber {
        guard !v.ordinal, !(v.spelled && v.fracDigits.isEmpty), v.intDigits.utf8.count <= 15, v.end < n,
              toks[v.end].kind == .word, let w = sysNumberWords[toks[v.end].text], !w.ordinal
        else { return v }
        let scale: Int
        switch w.word {
        case .hundred: scale = 100
        case .scale(let s): scale = s
        default: return v
        }
        guard var d = Decimal(string: v.text) else { return v }
        d *= Decimal(scale)
        let parts = "\(d)".split(separator: ".", maxSplits: 1)
        guard let whole = parts.first else { return v }
        let negative = whole.hasPrefix("-")
        return SysNumber(intDigits: String(negative ? whole.dropFirst() : whole), fracDigits: parts.count > 1 ? String(parts[1]) : "",
                         negative: negative, spelled: v.spelled, end: v.end + 1)
    }

    func digitNumber(at i: Int) -> SysNumber? {
        guard i < n, toks[i].kind == .digits else { return nil }
        var intPart = toks[i].text
        var j = i + 1
        // Thousands groups: "1,000,000" (only when the first group has at most three digits).
        if intPart.utf8.count <= 3 {
            while j + 1 < n, toks[j].text == ",", !toks[j].spaceBefore, toks[j + 1].kind == .digits,
                  !toks[j + 1].spaceBefore, toks[j + 1].text.utf8.count == 3,
                  !(j + 2 < n && toks[j + 2].kind == .digits)
            {
                intPart += toks[j + 1].text
                j += 2
            }
        }
        var frac = ""
        if j + 1 < n, toks[j].text == ".", !toks[j].spaceBefore, toks[j + 1].kind == .digits, !toks[j + 1].spaceBefore {
            frac = toks[j + 1].text
            j += 2
        }
        if frac.isEmpty, j < n, toks[j].kind == .word, !toks[j].spaceBefore {
            let s = toks[j].text
            if s == "st" || s == "nd" || s == "rd" || s == "th" {
                return SysNumber(intDigits: intPart, ordinal: true, end: j + 1)
            }
        }
        return SysNumber(intDigits: intPart, fracDigits: frac, end: j)
    }

    private func isCardinalWord(_ j: Int) -> Bool {
        guard j < n, toks[j].kind == .word, let w = sysNumberWords[toks[j].text] else { return false }
        switch w.word {
        case .unit(let v): return v > 0
        case .teen, .tens: return true
        default: return false
        }
    }

    private func isMultiplierWord(_ j: Int) -> Bool {
        guard j < n, toks[j].kind == .word else { return false }
        if toks[j].text == "dozen" { return true }
        guard let w = sysNumberWords[toks[j].text], !w.ordinal else { return false }
        switch w.word {
        case .hundred, .scale: return true
        default: return false
        }
    }

    /// Spelled-out numbers: "twenty five", "twenty-five", "a hundred and three", "two thousand twenty six",
    /// "one point five", "a dozen", "third", "twenty first".
    func spelledNumber(at i: Int) -> SysNumber? {
        enum Last { case none, a, unit, teen, tens, hundred, scale }
        var last = Last.none
        var total = 0, current = 0, lastScale = Int.max
        var end = i, value = 0, ordinal = false
        var j = i
        loop: while j < n {
            let t = toks[j]
            if t.kind == .symbol {
                if t.text == "-", last == .tens, !t.spaceBefore, j + 1 < n, !toks[j + 1].spaceBefore {
                    j += 1
                    continue
                }
                break
            }
            guard t.kind == .word else { break }
            if t.text == "a" || t.text == "an" {
                guard last == .none, isMultiplierWord(j + 1) else { break }
                current = 1
                last = .a
                j += 1
                continue
            }
            if t.text == "and" {
                guard last == .hundred || last == .scale, isCardinalWord(j + 1) else { break }
                j += 1
                continue
            }
            if t.text == "dozen" {
                guard last == .a || last == .unit || last == .teen || last == .tens, current > 0 else { break }
                current *= 12
                j += 1
                end = j
                value = total + current
                break
            }
            guard let (w, ord) = sysNumberWords[t.text] else { break }
            // "second" is a unit of time far more often than an ordinal: only "the second", "twenty second".
            if t.text == "second", last != .tens, !(last == .none && j > 0 && toks[j - 1].text == "the") { break }
            switch w {
            case .unit(let v):
                if v == 0 {
                    guard last == .none else { break loop }
                    current = 0
                } else {
                    guard last == .none || last == .tens || last == .hundred || last == .scale else { break loop }
                    current += v
                }
                last = .unit
            case .teen(let v), .tens(let v):
                guard last == .none || last == .hundred || last == .scale else { break loop }
                current += v
                if case .teen = w { last = .teen } else { last = .tens }
            case .hundred:
                guard last == .a || last == .unit || last == .teen || last == .tens, current >= 1, current <= 99 else {
                    break loop
                }
                current *= 100
                last = .hundred
            case .scale(let s):
                guard last != .none, current > 0, s < lastScale else { break loop }
                total += current * s
                current = 0
                lastScale = s
                last = .scale
            }
            j += 1
            end = j
            value = total + current
            if ord {
                ordinal = true
                break
            }
            if last == .unit && current == 0 && total == 0 { break }  // "zero" stands alone
        }
        guard end > i else { return nil }
        var frac = ""
        if !ordinal, end + 1 < n, toks[end].text == "point" {
            var k = end + 1
            while k < n, toks[k].kind == .word {
                if let w = sysNumberWords[toks[k].text], !w.ordinal, case .unit(let d) = w.word {
                    frac.append(Character(Unicode.Scalar(UInt8(48 + d))))
                } else if toks[k].text == "oh" {
                    frac.append("0")
                } else {
                    break
                }
                k += 1
            }
            if !frac.isEmpty { end = k }
        }
        return SysNumber(intDigits: String(value), fracDigits: frac, ordinal: ordinal, spelled: true, end: end)
    }
}
