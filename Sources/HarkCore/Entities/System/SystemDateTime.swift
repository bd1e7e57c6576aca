import Foundation

extension SysScanner {
    /// The local calendar day and second-of-day of an instant, in the scanner's time zone.
    func local(_ instant: Date) -> (day: SysDay, second: Int) {
        let t = instant.timeIntervalSince1970
        guard t.isFinite, abs(t) < 1e12 else { return (SysDay(days: 0), 0) }
        let secs = Int(t.rounded(.down)) + timeZone.secondsFromGMT(for: instant)
        let d = secs >= 0 ? secs / 86_400 : (secs - 86_399) / 86_400
        return (SysDay(days: d), secs - d * 86_400)
    }

    var today: SysDay {
        if let t = cache.today { return t }
        let t = local(now).day
        cache.today = t
        return t
    }

    func dateCand(_ first: Int, _ end: Int, _ d: SysDay) -> SysCandidate {
        SysCandidate(kind: .date, first: first, end: end, value: d.string)
    }

    func timeCand(_ first: Int, _ end: Int, _ h: Int, _ m: Int, _ s: Int = 0) -> SysCandidate {
        SysCandidate(kind: .time, first: first, end: end, value: sysTimeString(h, m, s))
    }

    /// The longest date or time mention starting at token `i`.
    func dateOrTime(at i: Int) -> [SysCandidate]? {
        var best: [SysCandidate]?
        var bestEnd = i
        func take(_ c: [SysCandidate]?) {
            guard let c, let e = c.map(\.end).max(), e > bestEnd else { return }
            best = c
            bestEnd = e
        }
        take(relative(at: i))
        take(partOfDay(at: i))
        if let d = dateMention(at: i) { take([d]) }
        if let t = timeMention(at: i) { take([t]) }
        return best
    }

    // MARK: Dates

    func dateMention(at i: Int) -> SysCandidate? {
        guard let w0 = word(i) ?? (i < n && toks[i].kind == .digits ? "" : nil) else { return nil }
        // A leading "on" belongs to the mention ("I plan to leave on Saturday" → "on Saturday").
        if w0 == "on", let d = dateCore(at: i + 1, allowBareDay: true) { return dateCand(i, d.end, d.day) }
        if w0 == "in", let m = monthAlone(at: i + 1) { return dateCand(i, m.end, m.day) }
        if let d = dateCore(at: i, allowBareDay: false) { return dateCand(i, d.end, d.day) }
        return nil
    }

    /// The next `weekday` strictly after today (Watson: "Tuesday", "this Tuesday" and "next Tuesday" said on a
    /// Tuesday all mean the Tuesday of next week).
    func upcoming(_ weekday: Int) -> SysDay {
        let t = today
        var delta = (weekday - t.weekday + 7) % 7
        if delta == 0 { delta = 7 }
        return SysDay(days: t.days + delta)
    }

    /// Month and day without a year: this year's date, or next year's once it has passed.
    func future(month: Int, day: Int) -> SysDay? {
        let t = today
        var y = t.civil.year
        for _ in 0..<9 {
            if SysDay.valid(year: y, month: month, day: day) {
                let d = SysDay(year: y, month: month, day: day)
                if d >= t { return d }
            }
            y += 1
        }
        return nil
    }

    func dayOfMonth(at j: Int, requireOrdinal: Bool) -> (day: Int, end: Int)? {
        guard j < n else { return nil }
        if toks[j].kind == .digits {
            guard toks[j].text.utf8.count <= 2, let v = Int(toks[j].text), v >= 1, v <= 31 else { return nil }
            if let num = digitNumber(at: j), num.ordinal { return (v, num.end) }
            if requireOrdinal { return nil }
            // Not "3.5" or "3,000".
            if sym(j + 1, "."), tight(j + 1), j + 2 < n, toks[j + 2].kind == .digits, tight(j + 2) { return nil }
            if sym(j + 1, ":") || sym(j + 1, "%") || sym(j + 1, "/") { return nil }
            return (v, j + 1)
        }
        if toks[j].kind == .word, let num = spelledNumber(at: j), num.ordinal, let v = num.small, v >= 1, v <= 31 {
            return (v, num.end)
        }
        return nil
    }

    func year(at j: Int) -> (year: Int, end: Int)? {
        var k = j
        if sym(k, ",") { k += 1 }
        guard k < n, toks[k].kind == .digits, toks[k].text.utf8.count == 4, let y = Int(toks[k].text),
              y >= 1000, y <= 2999
        else { return nil }
        if sym(k + 1, ":") || sym(k + 1, "%") { return nil }
        return (y, k + 1)
    }

    func dateOf(year: (year: Int, end: Int)?, month: Int, day: Int, end: Int) -> (day: SysDay, end: Int)? {
        if let year {
            guard SysDay.valid(year: year.year, month: month, day: day) else { return nil }
            return (SysDay(year: year.year, month: month, day: day), year.end)
        }
        guard let d = future(month: month, day: day) else { return nil }
        return (d, end)
    }

    func monthAlone(at j: Int) -> (day: SysDay, end: Int)? {
        guard let w = word(j), let m = sysMonths[w] else { return nil }
        if let y = year(at: j + 1), !sym(j + 1, ",") { return (SysDay(year: y.year, month: m.month, day: 1), y.end) }
        guard m.alone else { return nil }
        guard let d = future(month: m.month, day: 1) else { return nil }
        // The current month means today's month, not next year's.
        let t = today
        if t.civil.month == m.month { return (SysDay(year: t.civil.year, month: m.month, day: 1), j + 1) }
        return (d, j + 1)
    }

    func dateCore(at i: Int, allowBareDay: Bool) -> (day: SysDay, end: Int)? {
        guard i < n else { return nil }
        let t = today
        if let w = word(i) {
            switch w {
            case "today", "tonight": return (t, i + 1)
            case "tomorrow": return (SysDay(days: t.days + 1), i + 1)
            case "yesterday": return (SysDay(days: t.days - 1), i + 1)
            case "day":
                if word(i + 1) == "after", word(i + 2) == "tomorrow" { return (SysDay(days: t.days + 2), i + 3) }
                if word(i + 1) == "before", word(i + 2) == "yesterday" { return (SysDay(days: t.days - 2), i + 3) }
            case "the":
                if word(i + 1) == "day" {
                    if word(i + 2) == "after", word(i + 3) == "tomorrow" { return (SysDay(days: t.days + 2), i + 4) }
                    if word(i + 2) == "before", word(i + 3) == "yesterday" { return (SysDay(days: t.days - 2), i + 4) }
                }
                // "the 3rd of March"; "(on) the 3rd" only after "on".
                if let d = dayOfMonth(at: i + 1, requireOrdinal: true) {
                    if let r = dayThenMonth(d, at: d.end) { return r }
                    if allowBareDay {
                        let c = t.civil
                        var m = SysDay(year: c.year, month: c.month, day: 1)
                        for _ in 0..<3 {
                            let mc = m.civil
                            if SysDay.valid(year: mc.year, month: mc.month, day: d.day) {
                                let r = SysDay(year: mc.year, month: mc.month, day: d.day)
                                if r >= t { return (r, d.end) }
                            }
                            m = m.adding(months: 1)
                        }
                    }
                }
                if word(i + 1) == "weekend" { return (weekend(offset: 0), i + 2) }
            case "this", "next", "last", "coming", "past":
                if let wd = word(i + 1).flatMap({ sysWeekdays[$0] }) {
                    if w == "last" || w == "past" {
                        var delta = (t.weekday - wd + 7) % 7
                        if delta == 0 { delta = 7 }
                        return (SysDay(days: t.days - delta), i + 2)
                    }
                    return (upcoming(wd), i + 2)
                }
                let sign = w == "next" || w == "coming" ? 1 : (w == "this" ? 0 : -1)
                switch word(i + 1) {
                case "week":
                    if sign == 0 { return (t, i + 2) }
                    return (SysDay(days: t.days - t.weekday + 7 * sign), i + 2)
                case "weekend": return (weekend(offset: sign), i + 2)
                case "month":
                    if sign == 0 { return (t, i + 2) }
                    let c = t.civil
                    return (SysDay(year: c.year, month: c.month, day: 1).adding(months: sign), i + 2)
                case "year":
                    if sign == 0 { return (t, i + 2) }
                    return (SysDay(year: t.civil.year + sign, month: 1, day: 1), i + 2)
                default:
                    if w != "past", let m = word(i + 1).flatMap({ sysMonths[$0] }), m.alone || w != "this" {
                        let y = t.civil.year + (w == "next" ? 1 : (w == "last" ? -1 : 0))
                        if w == "coming" || w == "this", let d = future(month: m.month, day: 1) { return (d, i + 2) }
                        return (SysDay(year: y, month: m.month, day: 1), i + 2)
                    }
                }
            default:
                if let wd = sysWeekdays[w] { return (upcoming(wd), i + 1) }
                if let m = sysMonths[w] {
                    // "March 3rd", "March the 3rd", "march 3 2027", "May 13, 2020".
                    var k = i + 1
                    if word(k) == "the" { k += 1 }
                    if let d = dayOfMonth(at: k, requireOrdinal: false) {
                        return dateOf(year: year(at: d.end), month: m.month, day: d.day, end: d.end)
                    }
                    return monthAlone(at: i)
                }
                if let d = dayOfMonth(at: i, requireOrdinal: false), let r = dayThenMonth(d, at: d.end) { return r }
            }
            return nil
        }
        if toks[i].kind == .digits {
            if let r = numericDate(at: i) { return r }
            if let d = dayOfMonth(at: i, requireOrdinal: false), let r = dayThenMonth(d, at: d.end) { return r }
        }
        return nil
    }

    /// "3rd of March", "3 March 2027".
    func dayThenMonth(_ d: (day: Int, end: Int), at j: Int) -> (day: SysDay, end: Int)? {
        var k = j
        if word(k) == "of" { k += 1 }
        guard let w = word(k), let m = sysMonths[w] else { return nil }
        return dateOf(year: year(at: k + 1), month: m.month, day: d.day, end: k + 1)
    }

    /// Saturday of the current Monday-to-Sunday week, shifted by whole weeks.
    func weekend(offset: Int) -> SysDay {
        let t = today
        let sat = t.days - t.weekday + 5
        if offset == 0 && t.weekday == 6 { return t }
        return SysDay(days: sat + 7 * offset)
    }

    /// "2026-12-24", "12/24/2026" (US order unless the first number exceeds 12), "12/24".
    func numericDate(at i: Int) -> (day: SysDay, end: Int)? {
        guard toks[i].kind == .digits, let a = Int(toks[i].text.prefix(5)) else { return nil }
        let aLen = toks[i].text.utf8.count
        func digitsAt(_ j: Int, _ maxLen: Int) -> Int? {
            guard j < n, tight(j), toks[j].kind == .digits, toks[j].text.utf8.count <= maxLen else { return nil }
            return Int(toks[j].text)
        }
        if aLen == 4, sym(i + 1, "-"), tight(i + 1), let m = digitsAt(i + 2, 2), sym(i + 3, "-"), tight(i + 3),
           let d = digitsAt(i + 4, 2)
        {
            guard SysDay.valid(year: a, month: m, day: d) else { return nil }
            return (SysDay(year: a, month: m, day: d), i + 5)
        }
        guard aLen <= 2, sym(i + 1, "/"), tight(i + 1), let b = digitsAt(i + 2, 2) else { return nil }
        let (month, day) = a > 12 ? (b, a) : (a, b)
        if sym(i + 3, "/"), tight(i + 3), i + 4 < n, toks[i + 4].kind == .digits, tight(i + 4) {
            let yt = toks[i + 4].text
            guard yt.utf8.count == 4 || yt.utf8.count == 2, var y = Int(yt) else { return nil }
            if yt.utf8.count == 2 { y += 2000 }
            guard SysDay.valid(year: y, month: month, day: day) else { return nil }
            return (SysDay(year: y, month: month, day: day), i + 5)
        }
        guard month >= 1, month <= 12, let d = future(month: month, day: day) else { return nil }
        return (d, i + 3)
    }

    // MARK: Relative mentions ("in 3 days", "10 minutes from now", "two weeks ago", "now")

    func relative(at i: Int) -> [SysCandidate]? {
        guard i < n else { return nil }
        if word(i) == "now" || (word(i) == "right" && word(i + 1) == "now") {
            let e = word(i) == "now" ? i + 1 : i + 2
            let l = local(now)
            return [dateCand(i, e, l.day), timeCand(i, e, l.second / 3600, l.second / 60 % 60, l.second % 60)]
        }
        var k = i
        let leadingIn = word(i) == "in" || word(i) == "within"
        if leadingIn { k += 1 }
        var count: Double
        var e: Int
        if word(k) == "half", word(k + 1) == "an" || word(k + 1) == "a", word(k + 2) == "hour" {
            count = 0.5
            e = k + 2
        } else if word(k) == "a" || word(k) == "an" {
            count = 1
            e = k + 1
            if word(e) == "couple", word(e + 1) == "of" {
                count = 2
                e += 2
            }
        } else if let num = number(at: k), !num.ordinal, !num.negative, num.double <= 1_000_000 {
            count = num.double
            e = num.end
        } else {
            return nil
        }
        guard let unit = word(e).flatMap({ sysRelativeUnits[$0] }) else { return nil }
        e += 1
        var sign = 1
        if leadingIn {
        } else if word(e) == "ago" {
            sign = -1
            e += 1
        } else if (word(e) == "from" || word(e) == "after") && word(e + 1) == "now" {
            e += 2
        } else if word(e) == "later" {
            e += 1
        } else {
            return nil
        }
        switch unit {
        case .seconds(let s):
            let delta = count * Double(s) * Double(sign)
            let l = local(now.addingTimeInterval(delta))
            return [dateCand(i, e, l.day), timeCand(i, e, l.second / 3600, l.second / 60 % 60, l.second % 60)]
        case .days(let d):
            guard count == count.rounded(), count <= 100_000 else { return nil }
            return [dateCand(i, e, SysDay(days: today.days + sign * Int(count) * d))]
        case .months(let m):
            guard count == count.rounded(), count <= 10_000 else { return nil }
            let r = today.adding(months: sign * Int(count) * m)
            guard r.civil.year >= 1, r.civil.year <= 9999 else { return nil }
            return [dateCand(i, e, r)]
        }
    }

    // MARK: Times

    /// "this morning", "in the afternoon", "tomorrow evening": Watson reports a part of the day as two
    /// `sys-time` values, its start and its end (US English: morning 06–12, afternoon 12–18, evening 18–22,
    /// night 22–23:59:59). A bare "morning" only counts right after a day word, so "good morning" stays a greeting.
    func partOfDay(at i: Int) -> [SysCandidate]? {
        guard let w = word(i) else { return nil }
        var k = i
        if w == "this" {
            k += 1
        } else if w == "in", word(i + 1) == "the" {
            k += 2
        } else if w == "at", word(i + 1) == "night" {
            k += 1
        } else if i == 0 || word(i - 1).map({ !sysDayWords.contains($0) && sysWeekdays[$0] == nil }) ?? true {
            return nil
        }
        let range: (String, String)
        switch word(k) {
        case "morning": range = ("06:00:00", "12:00:00")
        case "afternoon": range = ("12:00:00", "18:00:00")
        case "evening": range = ("18:00:00", "22:00:00")
        case "night": range = ("22:00:00", "23:59:59")
        default: return nil
        }
        if w == "this", word(k) == "night" { return nil }
        return [SysCandidate(kind: .time, first: i, end: k + 1, value: range.0),
                SysCandidate(kind: .time, first: i, end: k + 1, value: range.1)]
    }

    func timeMention(at i: Int) -> SysCandidate? {
        guard i < n else { return nil }
        let at = word(i) == "at"
        guard var t = timeCore(at: at ? i + 1 : i, afterAt: at) else { return nil }
        // "tonight at 8", "this evening at 7:30": an hour without am/pm after an evening word is in the evening.
        if t.ambiguous, t.h >= 1, t.h <= 11, i > 0,
           word(i - 1) == "tonight" || (word(i - 2) == "this" && (word(i - 1) == "evening" || word(i - 1) == "afternoon"))
        {
            t.h += 12
        }
        return timeCand(i, t.end, t.h, t.m, t.s)
    }

    /// An hour 0...23 written as digits or words.
    func hour(at j: Int) -> (h: Int, end: Int, spelled: Bool)? {
        guard j < n else { return nil }
        if toks[j].kind == .digits {
            guard toks[j].text.utf8.count <= 2, let h = Int(toks[j].text), h <= 24 else { return nil }
            return (h, j + 1, false)
        }
        guard toks[j].kind == .word, let w = sysNumberWords[toks[j].text], !w.ordinal else { return nil }
        switch w.word {
        case .unit(let v) where v > 0: return (v, j + 1, true)
        case .teen(let v) where v <= 12: return (v, j + 1, true)
        default: return nil
        }
    }

    /// am/pm, "o'clock" and part-of-day suffixes after a clock time.
    func suffix(at j: Int) -> (kind: Int, end: Int)? {  // kind: 0 am, 1 pm, 2 o'clock, 3 night
        guard let w = word(j) else { return nil }
        switch w {
        case "am": return (0, j + 1)
        case "pm": return (1, j + 1)
        case "a", "p":
            if sym(j + 1, "."), tight(j + 1), word(j + 2) == "m", tight(j + 2) {
                let e = sym(j + 3, ".") && tight(j + 3) ? j + 4 : j + 3
                return (w == "a" ? 0 : 1, e)
            }
        case "o":
            if sym(j + 1, "'"), word(j + 2) == "clock" { return (2, j + 3) }
        case "oclock": return (2, j + 1)
        case "in":
            if word(j + 1) == "the" {
                switch word(j + 2) {
                case "morning": return (0, j + 3)
                case "afternoon", "evening": return (1, j + 3)
                default: break
                }
            }
        case "this":
            switch word(j + 1) {
            case "morning": return (0, j + 2)
            case "afternoon", "evening": return (1, j + 2)
            default: break
            }
        case "at":
            if word(j + 1) == "night" { return (3, j + 2) }
        case "tonight": return (3, j + 1)
        default: break
        }
        return nil
    }

    func apply(_ sfx: Int, _ h: Int) -> Int? {
        switch sfx {
        case 0: return h >= 1 && h <= 12 ? h % 12 : nil
        case 1: return h >= 1 && h <= 12 ? h % 12 + 12 : nil
        case 3: return h == 12 ? 0 : (h >= 6 && h < 12 ? h + 12 : (h <= 12 ? h : nil))
        default: return h <= 23 ? h : nil
        }
    }

    func timeCore(at i: Int, afterAt: Bool) -> (h: Int, m: Int, s: Int, end: Int, ambiguous: Bool)? {
        guard let w = word(i) ?? (i < n && toks[i].kind == .digits ? "" : nil) else { return nil }
        switch w {
        case "noon", "midday": return (12, 0, 0, i + 1, false)
        case "midnight": return (0, 0, 0, i + 1, false)
        default: break
        }
        if let r = pastTo(at: i, afterAt: afterAt) { return (r.h, r.m, r.s, r.end, r.ambiguous) }
        guard let hr = hour(at: i) else { return nil }
        var e = hr.end
        var m = 0, s = 0
        var strong = false
        if !hr.spelled, sym(e, ":"), tight(e), e + 1 < n, toks[e + 1].kind == .digits, tight(e + 1),
           toks[e + 1].text.utf8.count == 2, let mm = Int(toks[e + 1].text), mm < 60
        {
            m = mm
            e += 2
            strong = true
            if sym(e, ":"), tight(e), e + 1 < n, toks[e + 1].kind == .digits, tight(e + 1),
               toks[e + 1].text.utf8.count == 2, let ss = Int(toks[e + 1].text), ss < 60
            {
                s = ss
                e += 2
            }
            if e < n, toks[e].kind == .digits, tight(e) { return nil }
        } else if hr.spelled {
            if word(e) == "oh", let u = word(e + 1).flatMap({ sysNumberWords[$0] }), !u.ordinal,
               case .unit(let v) = u.word, v > 0
            {
                m = v
                e += 2
            } else if let mm = spelledNumber(at: e), !mm.ordinal, mm.isInteger, let v = mm.small, v >= 10, v < 60 {
                m = v
                e = mm.end
            }
        } else if hr.h > 23 || (hr.end < n && toks[hr.end].kind == .symbol && !toks[hr.end].spaceBefore
                                && toks[hr.end].text != "." && toks[hr.end].text != "," && toks[hr.end].text != "?"
                                && toks[hr.end].text != "!")
        {
            return nil
        }
        var h = hr.h
        var ambiguous = true  // no am/pm or part of day said
        if let sfx = suffix(at: e) {
            if sfx.kind == 2, m != 0 { return nil }
            guard let hh = apply(sfx.kind, h) else { return nil }
            h = hh
            e = sfx.end
            ambiguous = sfx.kind == 2
            if sfx.kind == 2, let more = suffix(at: e), more.kind != 2, let h2 = apply(more.kind, hr.h) {
                h = h2
                e = more.end
                ambiguous = false
            }
        } else if !strong && !afterAt {
            return nil
        } else if !strong {
            // "at 5 percent", "at 5 dollars", "at 3 March" are not times.
            if let nw = word(e) ?? (e < n ? toks[e].text : nil),
               sysCurrencyWords[nw] != nil || nw == "%" || nw == "percent" || nw == "per" || sysMonths[nw] != nil
            {
                return nil
            }
        }
        guard h <= 23 else { return nil }
        return (h, m, s, e, ambiguous)
    }

    /// "half past six", "quarter to nine", "ten past five", "20 minutes to 6".
    func pastTo(at i: Int, afterAt: Bool) -> (h: Int, m: Int, s: Int, end: Int, ambiguous: Bool)? {
        var k = i
        var minutes: Int
        var loose = false
        if word(k) == "half" {
            minutes = 30
            k += 1
        } else if word(k) == "quarter" || (word(k) == "a" && word(k + 1) == "quarter") {
            minutes = 15
            k += word(k) == "a" ? 2 : 1
        } else if let num = number(at: k), !num.ordinal, num.isInteger, let v = num.small, v >= 1, v < 60 {
            minutes = v
            k = num.end
            if word(k) == "minutes" || word(k) == "minute" || word(k) == "mins" {
                k += 1
            } else {
                loose = true
            }
        } else {
            return nil
        }
        guard let rel = word(k), ["past", "after", "to", "till", "til", "before"].contains(rel) else { return nil }
        if minutes == 30 && rel != "past" && rel != "after" { return nil }
        guard let hr = hour(at: k + 1), hr.h >= 1, hr.h <= 12 || !hr.spelled else { return nil }
        var e = hr.end
        if !hr.spelled, sym(e, ":") { return nil }
        var h = hr.h
        var ambiguous = true
        if let sfx = suffix(at: e), sfx.kind != 2, let hh = apply(sfx.kind, h) {
            h = hh
            e = sfx.end
            ambiguous = false
        } else if loose && !afterAt && rel != "past" {
            return nil
        }
        if rel == "past" || rel == "after" { return (h % 24, minutes, 0, e, ambiguous) }
        return ((h + 23) % 24, 60 - minutes, 0, e, ambiguous)
    }
}

enum SysRelativeUnit {
    case seconds(Int), days(Int), months(Int)
}

let sysRelativeUnits: [String: SysRelativeUnit] = [
    "second": .seconds(1), "seconds": .seconds(1), "sec": .seconds(1), "secs": .seconds(1),
    "minute": .seconds(60), "minutes": .seconds(60), "min": .seconds(60), "mins": .seconds(60),
    "hour": .seconds(3600), "hours": .seconds(3600), "hr": .seconds(3600), "hrs": .seconds(3600),
    "day": .days(1), "days": .days(1), "week": .days(7), "weeks": .days(7), "fortnight": .days(14),
    "fortnights": .days(14), "month": .months(1), "months": .months(1), "year": .months(12), "years": .months(12),
]

/// Day words after which a bare part of the day ("tomorrow morning") is a time mention.
let sysDayWords: Set<String> = ["today", "tomorrow", "yesterday"]
