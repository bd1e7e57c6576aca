import Foundation

/// Proleptic Gregorian day arithmetic on plain integers (days since 1970-01-01), so resolving "next friday"
/// costs no `Calendar` or `DateFormatter` allocation. Algorithms after Howard Hinnant's `days_from_civil`.
struct SysDay: Comparable {
    var days: Int

    init(days: Int) { self.days = days }

    init(year: Int, month: Int, day: Int) {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        days = era * 146_097 + doe - 719_468
    }

    var civil: (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }

    /// 0 = Monday ... 6 = Sunday.
    var weekday: Int { ((days % 7) + 7 + 3) % 7 }

    static func < (a: SysDay, b: SysDay) -> Bool { a.days < b.days }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    static func valid(year: Int, month: Int, day: Int) -> Bool {
        year >= 1 && year <= 9999 && month >= 1 && month <= 12 && day >= 1 && day <= daysIn(month: month, year: year)
    }

    /// Adds months, clamping the day to the new month's length (Jan 31 + 1 month = Feb 28/29).
    func adding(months: Int) -> SysDay {
        let c = civil
        let total = c.year * 12 + (c.month - 1) + months
        let y = total >= 0 ? total / 12 : (total - 11) / 12
        let m = total - y * 12 + 1
        return SysDay(year: y, month: m, day: min(c.day, SysDay.daysIn(month: m, year: y)))
    }

    /// `yyyy-MM-dd`.
    var string: String {
        let c = civil
        return sysPad(c.year, 4) + "-" + sysPad(c.month, 2) + "-" + sysPad(c.day, 2)
    }
}

func sysPad(_ v: Int, _ width: Int) -> String {
    let s = String(v)
    let count = s.utf8.count
    return count >= width ? s : String(repeating: "0", count: width - count) + s
}

/// `HH:mm:ss`.
func sysTimeString(_ h: Int, _ m: Int, _ s: Int) -> String {
    sysPad(h, 2) + ":" + sysPad(m, 2) + ":" + sysPad(s, 2)
}

let sysWeekdays: [String: Int] = [
    "monday": 0, "tuesday": 1, "wednesday": 2, "thursday": 3, "friday": 4, "saturday": 5, "sunday": 6,
    "tues": 1, "weds": 2, "thurs": 3,
]

/// Month names; `full` is false for abbreviations and the words that are usually not months ("may", "march").
let sysMonths: [String: (month: Int, alone: Bool)] = [
    "january": (1, true), "february": (2, true), "march": (3, false), "april": (4, true), "may": (5, false),
    "june": (6, true), "july": (7, true), "august": (8, true), "september": (9, true), "october": (10, true),
    "november": (11, true), "december": (12, true),
    "jan": (1, false), "feb": (2, false), "mar": (3, false), "apr": (4, false), "jun": (6, false),
    "jul": (7, false), "aug": (8, false), "sep": (9, false), "sept": (9, false), "oct": (10, false),
    "nov": (11, false), "dec": (12, false),
]
