import Foundation

/// Watson's system entities (`sys-number`, `sys-percentage`, `sys-currency`, `sys-date`, `sys-time`) for English.
///
/// Follows IBM's "new system entities" (the only ones for English since October 2020): a mention recognised
/// as a date, time, percentage or currency is *not* also reported as `sys-number`. Relative dates and times
/// resolve against the `now` and `timeZone` arguments, never the wall clock.
public struct SystemEntityExtractor: Sendable {
    public static let supported: Set<String> = ["sys-number", "sys-percentage", "sys-currency", "sys-date", "sys-time"]

    let number: Bool, percentage: Bool, currency: Bool, date: Bool, time: Bool

    /// `enabled` holds names like `sys-number`; names this extractor does not know are ignored.
    public init(enabled: Set<String>) {
        number = enabled.contains("sys-number")
        percentage = enabled.contains("sys-percentage")
        currency = enabled.contains("sys-currency")
        date = enabled.contains("sys-date")
        time = enabled.contains("sys-time")
    }

    /// Every enabled system entity in `text`, sorted by start offset.
    public func extract(from text: String, now: Date, timeZone: TimeZone) -> [EntityMatch] {
        guard number || percentage || currency || date || time else { return [] }
        let toks = sysTokenize(text)
        if toks.isEmpty { return [] }
        let scanner = SysScanner(toks: toks, text: text, now: now, timeZone: timeZone, options: self)
        return scanner.run()
    }
}

/// One recognised mention before it becomes `EntityMatch`es.
struct SysCandidate {
    enum Kind { case number, percentage, currency, date, time }
    var kind: Kind
    var first: Int  // token index
    var end: Int  // token index, exclusive
    var value: String
    var numeric: Double = 0
    var unit: String = ""
}

struct SysScanner {
    let toks: [SysToken]
    let n: Int
    let text: String
    let now: Date
    let timeZone: TimeZone
    let options: SystemEntityExtractor
    /// Today's date in `timeZone`, worked out on first use: time-zone offsets are not free.
    let cache = SysCache()

    init(toks: [SysToken], text: String, now: Date, timeZone: TimeZone, options: SystemEntityExtractor) {
        self.toks = toks
        self.n = toks.count
        self.text = text
        self.now = now
        self.timeZone = timeZone
        self.options = options
    }

    func word(_ j: Int) -> String? { j < n && toks[j].kind == .word ? toks[j].text : nil }
    func sym(_ j: Int, _ s: String) -> Bool { j < n && toks[j].kind == .symbol && toks[j].text == s }
    func tight(_ j: Int) -> Bool { j < n && !toks[j].spaceBefore }

    /// Whether token `i` could start anything at all: a cheap gate that keeps number-free sentences fast.
    func mayStart(_ i: Int) -> Bool {
        let t = toks[i]
        switch t.kind {
        case .digits: return true
        case .symbol: return t.text == "-" || t.text == "$" || t.text == "€" || t.text == "£" || t.text == "¥"
        case .other: return false
        case .word: return sysTriggerWords.contains(t.text) || sysNumberWords[t.text] != nil
        }
    }

    func run() -> [EntityMatch] {
        var out: [SysCandidate] = []
        var i = 0
        let wantDateTime = options.date || options.time
        let wantNumbers = options.number || options.percentage || options.currency
        while i < n {
            guard mayStart(i) else {
                i += 1
                continue
            }
            var best: [SysCandidate] = []
            var bestEnd = i
            func consider(_ c: [SysCandidate]) {
                guard let e = c.map(\.end).max(), e > bestEnd else { return }
                best = c
                bestEnd = e
            }
            if wantDateTime {
                if let c = dateOrTime(at: i) { consider(c) }
            }
            if wantNumbers, let num = number(at: i) {
                if options.currency, let c = currencyAfter(num, first: i) { consider([c]) }
                if options.percentage, let c = percentAfter(num, first: i) { consider([c]) }
                if options.number {
                    consider([SysCandidate(kind: .number, first: i, end: num.end, value: num.text, numeric: num.double)])
                }
            }
            if options.currency, let c = currencyPrefixed(at: i) { consider([c]) }
            if best.isEmpty {
                i += 1
            } else {
                out.append(contentsOf: best)
                i = bestEnd
            }
        }
        return emit(out)
    }

    // MARK: Percentages and currencies

    func percentAfter(_ num: SysNumber, first: Int) -> SysCandidate? {
        guard !num.ordinal else { return nil }
        var e = num.end
        if sym(e, "%") {
            e += 1
        } else if word(e) == "percent" || word(e) == "pct" || word(e) == "percentage" {
            e += 1
        } else if word(e) == "per", word(e + 1) == "cent" {
            e += 2
        } else if sym(e, "-"), tight(e), tight(e + 1), let second = digitNumber(at: e + 1), sym(second.end, "%") {
            // "1-2%": both ends are percentages.
        } else {
            return nil
        }
        return SysCandidate(kind: .percentage, first: first, end: e, value: num.text, numeric: num.double)
    }

    func currencyAfter(_ num: SysNumber, first: Int) -> SysCandidate? {
        guard !num.ordinal, let w = word(num.end) ?? (num.end < n && toks[num.end].kind == .symbol ? toks[num.end].text : nil),
              let unit = sysCurrencyWords[w]
        else { return nil }
        var e = num.end + 1
        var amount = num.double
        if w == "cent" || w == "cents" {
            amount /= 100
        } else if word(e) == "and", let cents = number(at: e + 1), !cents.ordinal, let c = cents.small, c < 100,
                  word(cents.end) == "cents" || word(cents.end) == "cent"
        {
            amount += Double(c) / 100
            e = cents.end + 1
        }
        let value = amount == num.double ? num.text : sysFormat(amount)
        return SysCandidate(kind: .currency, first: first, end: e, value: value, numeric: amount, unit: unit.code)
    }

    func currencyPrefixed(at i: Int) -> SysCandidate? {
        guard i < n, toks[i].kind == .symbol, let unit = sysCurrencyWords[toks[i].text], unit.symbol,
              let num = digitNumber(at: i + 1), !num.ordinal
        else { return nil }
        return SysCandidate(kind: .currency, first: i, end: num.end, value: num.text, numeric: num.double, unit: unit.code)
    }

    // MARK: Output

    /// A date and a time mentioned together ("today at 5", "tomorrow morning", "in 10 minutes") share a
    /// `datetime_link` named after their joint span, as Watson's `datetime_link_13_23`.
    func datetimeLinks(_ cands: [SysCandidate]) -> [String?] {
        var links = [String?](repeating: nil, count: cands.count)
        func isDT(_ k: Int) -> Bool { cands[k].kind == .date || cands[k].kind == .time }
        var k = 0
        while k < cands.count {
            guard isDT(k) else {
                k += 1
                continue
            }
            var j = k + 1
            while j < cands.count, isDT(j), cands[j - 1].end == cands[j].first || cands[j - 1].first == cands[j].first {
                j += 1
            }
            let kinds = cands[k..<j].map(\.kind)
            if kinds.contains(.date) && kinds.contains(.time) {
                let s = toks[cands[k..<j].map(\.first).min()!].start, e = toks[cands[k..<j].map(\.end).max()! - 1].end
                for m in k..<j { links[m] = "datetime_link_\(s)_\(e)" }
            }
            k = j
        }
        return links
    }

    func emit(_ cands: [SysCandidate]) -> [EntityMatch] {
        var result: [EntityMatch] = []
        result.reserveCapacity(cands.count)
        let tzName = timeZone.identifier
        let links = datetimeLinks(cands)
        for (k, c) in cands.enumerated() {
            let a = toks[c.first], b = toks[c.end - 1]
            let literal = String(text.unicodeScalars[a.lo..<b.hi])
            var meta = JSONObject()
            let name: String
            switch c.kind {
            case .number:
                name = "sys-number"
                meta["numeric_value"] = .number(c.numeric)
            case .percentage:
                name = "sys-percentage"
                meta["numeric_value"] = .number(c.numeric)
            case .currency:
                name = "sys-currency"
                meta["numeric_value"] = .number(c.numeric)
                meta["unit"] = .string(c.unit)
            case .date, .time:
                name = c.kind == .date ? "sys-date" : "sys-time"
                meta["calendar_type"] = "GREGORIAN"
                meta["timezone"] = .string(tzName)
                if let link = links[k] { meta["datetime_link"] = .string(link) }
            }
            if (c.kind == .date && !options.date) || (c.kind == .time && !options.time) { continue }
            result.append(EntityMatch(entity: name, value: c.value, start: a.start, end: b.end, confidence: 1,
                                      literal: literal, metadata: meta))
        }
        return result
    }
}

let sysCurrencyWords: [String: (code: String, symbol: Bool)] = [
    "$": ("USD", true), "€": ("EUR", true), "£": ("GBP", true), "¥": ("JPY", true),
    "dollar": ("USD", false), "dollars": ("USD", false), "bucks": ("USD", false), "usd": ("USD", false),
    "cent": ("USD", false), "cents": ("USD", false),
    "euro": ("EUR", false), "euros": ("EUR", false), "eur": ("EUR", false),
    "gbp": ("GBP", false), "quid": ("GBP", false), "yen": ("JPY", false), "jpy": ("JPY", false),
]

/// Words that can begin a date or time mention (number words are checked separately).
let sysTriggerWords: Set<String> = [
    "a", "an", "at", "on", "in", "within", "right", "the", "this", "next", "last", "coming", "today", "tomorrow", "yesterday", "tonight",
    "day", "now", "noon", "morning", "afternoon", "evening", "night", "midday", "midnight", "half", "quarter", "minus", "negative",
    "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "tues", "weds", "thurs",
    "january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november",
    "december", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec", "dozen",
]

/// Per-call memo of values derived from `now`; lives and dies with one `extract` call.
final class SysCache {
    var today: SysDay?
}
