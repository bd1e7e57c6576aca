import Foundation

extension EventStore {
    /// Reads a "since" time as people type it, for `hark events --since` and the web API:
    /// - a relative age: a whole number and a unit, `s`, `m`, `h`, `d` or `w` (`90s`, `10m`, `2h`, `1d`): that long before `now`;
    /// - ISO 8601: `2026-11-30`, `2026-11-30 05:00`, `2026-11-30T05:00:00Z`, `2026-11-30T05:00:00.250+01:00`.
    ///   Without a zone it is a time in `timeZone` (the local one), without a time it is midnight.
    ///
    /// Returns `nil` for anything else, including impossible dates (`2026-02-30`, `25:00`): the caller says what
    /// it got, rather than guessing.
    public static func parseSince(_ text: String, now: Date = Date(), timeZone: TimeZone = .current) -> Date? {
        let text = text.trimmingCharacters(in: .whitespaces)
        if let age = relativeAge(text) { return now.addingTimeInterval(-age) }
        return absoluteTime(text, timeZone: timeZone)
    }

    private static func relativeAge(_ text: String) -> TimeInterval? {
        guard let unit = text.last, let count = Int(text.dropLast()), count >= 0, !text.dropLast().hasPrefix("+") else { return nil }
        let seconds: Double
        switch unit {
        case "s": seconds = 1
        case "m": seconds = 60
        case "h": seconds = 3_600
        case "d": seconds = 86_400
        case "w": seconds = 604_800
        default: return nil
        }
        return Double(count) * seconds
    }

    private static func absoluteTime(_ text: String, timeZone: TimeZone) -> Date? {
        let pattern = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?([Zz]|[+-]\d{2}:?\d{2})?)?$/
        guard let m = text.wholeMatch(of: pattern) else { return nil }
        func int(_ s: Substring?) -> Int { s.flatMap { Int($0) } ?? 0 }
        var zone = timeZone
        if let designator = m.8 {
            if designator == "Z" || designator == "z" {
                zone = TimeZone(secondsFromGMT: 0) ?? timeZone
            } else {
                let digits = designator.dropFirst().filter(\.isNumber)
                let hours = int(digits.prefix(2)), minutes = int(digits.suffix(2))
                guard hours <= 23, minutes <= 59 else { return nil }
                let offset = (hours * 3_600 + minutes * 60) * (designator.first == "-" ? -1 : 1)
                guard let fixed = TimeZone(secondsFromGMT: offset) else { return nil }
                zone = fixed
            }
        }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let fields = DateComponents(year: int(m.1), month: int(m.2), day: int(m.3), hour: int(m.4), minute: int(m.5), second: int(m.6))
        guard let date = calendar.date(from: fields) else { return nil }
        // Calendar rolls 30 February over to 2 March: reading the fields back catches dates that do not exist.
        let back = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        guard back.year == fields.year, back.month == fields.month, back.day == fields.day, back.hour == fields.hour,
              back.minute == fields.minute, back.second == fields.second else { return nil }
        let fraction = m.7.map { Double("0." + $0) ?? 0 } ?? 0
        return date.addingTimeInterval(fraction)
    }
}
