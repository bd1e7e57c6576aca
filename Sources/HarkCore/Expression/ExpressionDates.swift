import Foundation

/// A wall-clock date, time or date-time as Watson passes them around: strings `yyyy-MM-dd`, `HH:mm:ss`
/// and `yyyy-MM-dd HH:mm:ss`. Arithmetic and formatting happen in GMT on the wall-clock fields, so no
/// time-zone or daylight-saving shift can creep in; only `now()`/`today()` look at the scope's zone.
struct WallClock: Sendable, Equatable {
    enum Kind: Sendable { case date, time, dateTime }
    var kind: Kind
    /// Seconds since 1970-01-01 00:00:00 of the wall-clock fields (a time alone sits on 1970-01-01, as IBM
    /// documents for `reformatDateTime`).
    var seconds: Double

    var date: Date { Date(timeIntervalSince1970: seconds) }

    /// Parses `yyyy-MM-dd`, `HH:mm:ss`, `HH:mm`, `yyyy-MM-dd HH:mm:ss` and `yyyy-MM-ddTHH:mm:ss`
    /// (fractional seconds and a trailing `Z` are ignored). Nil for anything else.
    init?(_ text: String) {
        let s = Array(text.trimmingCharacters(in: .whitespaces).utf8)
        var i = 0
        func number(_ count: Int) -> Int? {
            guard i + count <= s.count else { return nil }
            var v = 0
            for k in i..<(i + count) {
                let c = s[k]
                guard c >= 48, c <= 57 else { return nil }
                v = v * 10 + Int(c - 48)
            }
            i += count
            return v
        }
        func eat(_ c: UInt8) -> Bool {
            if i < s.count, s[i] == c { i += 1; return true }
            return false
        }
        var days = 0.0
        var hasDate = false
        var secs = 0.0
        if s.count >= 10, s[4] == 45 /* - */ {
            guard let y = number(4), eat(45), let m = number(2), eat(45), let d = number(2),
                (1...12).contains(m), (1...31).contains(d)
            else { return nil }
            days = Double(WallClock.daysFromCivil(y, m, d))
            hasDate = true
            guard eat(32) || eat(84) /* ' ' or T */ else {
                guard i == s.count else { return nil }
                self.kind = .date
                self.seconds = days * 86_400
                return
            }
        }
        guard let h = number(2), eat(58), let mi = number(2), h < 24, mi < 60 else { return nil }
        var sec = 0
        if eat(58) {
            guard let x = number(2), x < 61 else { return nil }
            sec = x
            if eat(46) { while number(1) != nil {} }
        }
        _ = eat(90)  // Z
        guard i == s.count else { return nil }
        secs = Double(h * 3600 + mi * 60 + sec)
        self.kind = hasDate ? .dateTime : .time
        self.seconds = days * 86_400 + secs
    }

    init(kind: Kind, seconds: Double) {
        self.kind = kind
        self.seconds = seconds
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
    static func daysFromCivil(_ y0: Int, _ m: Int, _ d: Int) -> Int {
        let y = m <= 2 ? y0 - 1 : y0
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// The canonical Watson string for this value's kind.
    var text: String {
        switch kind {
        case .date: return ExpressionDates.format(date, pattern: "yyyy-MM-dd")
        case .time: return ExpressionDates.format(date, pattern: "HH:mm:ss")
        case .dateTime: return ExpressionDates.format(date, pattern: "yyyy-MM-dd HH:mm:ss")
        }
    }
}

enum ExpressionDates {
    static let gmt = TimeZone(identifier: "GMT")!
    static let calendar: Calendar = {
        var c = Calendar(identifier: .gregorian)
        c.timeZone = gmt
        c.locale = Locale(identifier: "en_US_POSIX")
        return c
    }()

    /// One `DateFormatter` per (pattern, zone), created on first use. Formatters are not documented as
    /// thread-safe on every platform, so each use holds the cache's lock.
    final class FormatterCache: @unchecked Sendable {
        private let lock = NSLock()
        private var formatters: [String: DateFormatter] = [:]

        func format(_ date: Date, pattern: String, zone: TimeZone) -> String {
            lock.lock()
            defer { lock.unlock() }
            let key = zone.identifier + "\u{1}" + pattern
            let f: DateFormatter
            if let cached = formatters[key] {
                f = cached
            } else {
                f = DateFormatter()
                f.locale = Locale(identifier: "en_US_POSIX")
                f.calendar = ExpressionDates.calendar
                f.timeZone = zone
                f.dateFormat = pattern
                if formatters.count > 256 { formatters.removeAll(keepingCapacity: true) }
                formatters[key] = f
            }
            return f.string(from: date)
        }
    }
    static let formatters = FormatterCache()

    static func format(_ date: Date, pattern: String, zone: TimeZone = gmt) -> String {
        formatters.format(date, pattern: pattern, zone: zone)
    }

    /// `now()`: Watson returns `yyyy-MM-dd HH:mm:ss` in the client's zone.
    static func now(_ date: Date, in zone: TimeZone) -> String {
        format(date, pattern: "yyyy-MM-dd HH:mm:ss", zone: zone)
    }

    static func today(_ date: Date, in zone: TimeZone) -> String {
        format(date, pattern: "yyyy-MM-dd", zone: zone)
    }

    /// Java `SimpleDateFormat` pattern → ICU pattern. They agree on the letters Watson workspaces use
    /// (`y M d E a h H m s S z`); Java's `u` (ISO day number, 1 = Monday) has no ICU twin, so it is replaced
    /// by a quoted literal for the date at hand.
    static func icuPattern(_ java: String, for date: Date) -> String {
        guard java.contains("u") else { return java }
        var out = ""
        var quoted = false
        var weekday: Int?
        for c in java {
            if c == "'" { quoted.toggle() }
            if c == "u" && !quoted {
                let w = weekday ?? {
                    let sundayFirst = calendar.component(.weekday, from: date)  // 1 = Sunday
                    return sundayFirst == 1 ? 7 : sundayFirst - 1
                }()
                weekday = w
                out += "'\(w)'"
            } else {
                out.append(c)
            }
        }
        return out
    }

    static func reformat(_ value: WallClock, pattern: String) -> String {
        format(value.date, pattern: icuPattern(pattern, for: value.date))
    }

    enum Unit { case seconds, minutes, hours, days, weeks, months, years }

    static func add(_ n: Int, _ unit: Unit, to value: WallClock) -> WallClock {
        switch unit {
        case .seconds: return shifted(value, Double(n))
        case .minutes: return shifted(value, Double(n) * 60)
        case .hours: return shifted(value, Double(n) * 3600)
        case .days: return shifted(value, Double(n) * 86_400)
        case .weeks: return shifted(value, Double(n) * 7 * 86_400)
        case .months, .years:
            var comps = DateComponents()
            if unit == .months { comps.month = n } else { comps.year = n }
            // Calendar arithmetic clamps the day (Jan 31 + 1 month = Feb 28), as java.time does.
            let d = calendar.date(byAdding: comps, to: value.date) ?? value.date
            return WallClock(kind: value.kind, seconds: d.timeIntervalSince1970)
        }
    }

    private static func shifted(_ value: WallClock, _ delta: Double) -> WallClock {
        var s = value.seconds + delta
        if value.kind == .time {
            // A time alone wraps around midnight.
            s = s.truncatingRemainder(dividingBy: 86_400)
            if s < 0 { s += 86_400 }
        }
        return WallClock(kind: value.kind, seconds: s)
    }

    static func timeOfDay(_ s: Double) -> Double {
        let r = s.truncatingRemainder(dividingBy: 86_400)
        return r < 0 ? r + 86_400 : r
    }

    /// Orders two date/time values the way IBM documents `.before`/`.after`: a date-time against a time
    /// compares only the times; a date against a date-time compares from midnight; a time against a date
    /// cannot be compared (nil).
    static func compare(_ a: WallClock, _ b: WallClock) -> ComparisonResult? {
        var x = a.seconds, y = b.seconds
        switch (a.kind, b.kind) {
        case (.time, .date), (.date, .time): return nil
        case (.dateTime, .time): x = timeOfDay(x)
        case (.time, .dateTime): y = timeOfDay(y)
        default: break
        }
        return x < y ? .orderedAscending : (x > y ? .orderedDescending : .orderedSame)
    }
}
