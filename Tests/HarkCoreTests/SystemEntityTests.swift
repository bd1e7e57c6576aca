import Foundation
import Testing
@testable import HarkCore

/// Monday 30 November 2026, 10:15:00 UTC: every relative date below is computed from here.
private let monday = Date(timeIntervalSince1970: 1_796_033_700)
private let utc = TimeZone(identifier: "UTC")!
private let all = SystemEntityExtractor(enabled: SystemEntityExtractor.supported)

private struct Expected: CustomStringConvertible, Sendable {
    var entity: String, value: String, start: Int, end: Int
    init(_ entity: String, _ value: String, _ start: Int, _ end: Int) {
        (self.entity, self.value, self.start, self.end) = (entity, value, start, end)
    }
    var description: String { "\(entity)=\(value)@[\(start),\(end))" }
}

private func N(_ v: String, _ s: Int, _ e: Int) -> Expected { Expected("sys-number", v, s, e) }
private func P(_ v: String, _ s: Int, _ e: Int) -> Expected { Expected("sys-percentage", v, s, e) }
private func C(_ v: String, _ s: Int, _ e: Int) -> Expected { Expected("sys-currency", v, s, e) }
private func D(_ v: String, _ s: Int, _ e: Int) -> Expected { Expected("sys-date", v, s, e) }
private func T(_ v: String, _ s: Int, _ e: Int) -> Expected { Expected("sys-time", v, s, e) }

private func found(_ text: String, _ x: SystemEntityExtractor = all, now: Date = monday, tz: TimeZone = utc)
    -> [String]
{
    x.extract(from: text, now: now, timeZone: tz).map { "\($0.entity)=\($0.value)@[\($0.start),\($0.end))" }
}

@Suite struct SystemEntityExtractorTests {
    @Test func referenceInstantIsAMondayMorning() {
        #expect(found("now") == ["sys-date=2026-11-30@[0,3)", "sys-time=10:15:00@[0,3)"])
    }

    @Test(arguments: [
        ("25", [N("25", 0, 2)]),
        ("I need 3.5 liters", [N("3.5", 7, 10)]),
        ("1,000 people", [N("1000", 0, 5)]),
        ("it is -4 outside", [N("-4", 6, 8)]),
        ("minus four", [N("-4", 0, 10)]),
        ("twenty five", [N("25", 0, 11)]),
        ("twenty-five", [N("25", 0, 11)]),
        ("a hundred and three", [N("103", 0, 19)]),
        ("two thousand twenty six", [N("2026", 0, 23)]),
        ("three million five hundred thousand", [N("3500000", 0, 35)]),
        ("one point five", [N("1.5", 0, 14)]),
        ("a dozen eggs", [N("12", 0, 7)]),
        ("1.5 million", [N("1500000", 0, 11)]),
        ("2 hundred", [N("200", 0, 9)]),
        ("one point five billion", [N("1500000000", 0, 22)]),
        ("two dozen", [N("24", 0, 9)]),
        ("the third one", [N("3", 4, 9), N("1", 10, 13)]),
        ("the twenty-first", [N("21", 4, 16)]),
        ("21st", [N("21", 0, 4)]),
        ("turn one light on", [N("1", 5, 8)]),
        ("one two three", [N("1", 0, 3), N("2", 4, 7), N("3", 8, 13)]),
        ("I'm interested in 5 to 7.", [N("5", 18, 19), N("7", 23, 24)]),
        ("007", [N("7", 0, 3)]),
        ("2.50", [N("2.5", 0, 4)]),
        ("9999999999999999999999", [N("9999999999999999999999", 0, 22)]),
        ("wait a second", []),
        ("turn on the light", []),
        ("what's up", []),
        ("I want some tea", []),
        ("a", []),
        ("", []),
        ("a an and the point dozen hundred", []),
    ])
    fileprivate func numbers(text: String, expected: [Expected]) {
        #expect(found(text) == expected.map(\.description), "\(text)")
    }

    @Test(arguments: [
        ("50%", [P("50", 0, 3)]),
        ("fifty percent", [P("50", 0, 13)]),
        ("12.5 per cent", [P("12.5", 0, 13)]),
        ("1,234.56%", [P("1234.56", 0, 9)]),
        ("raise it by 5 percent", [P("5", 12, 21)]),
        ("1-2%", [P("1", 0, 1), P("2", 2, 4)]),
        ("twenty dollars", [C("20", 0, 14)]),
        ("$1,234.56", [C("1234.56", 0, 9)]),
        ("20 cents", [C("0.2", 0, 8)]),
        ("five dollars and fifty cents", [C("5.5", 0, 28)]),
        ("€10", [C("10", 0, 3)]),
        ("ten euros", [C("10", 0, 9)]),
        ("5 thousand dollars", [C("5000", 0, 18)]),
        ("one hundred percent", [P("100", 0, 19)]),
    ])
    fileprivate func percentagesAndCurrencies(text: String, expected: [Expected]) {
        #expect(found(text) == expected.map(\.description), "\(text)")
    }

    @Test(arguments: [
        ("today", [D("2026-11-30", 0, 5)]),
        ("tomorrow", [D("2026-12-01", 0, 8)]),
        ("yesterday", [D("2026-11-29", 0, 9)]),
        ("the day after tomorrow", [D("2026-12-02", 0, 22)]),
        ("the day before yesterday", [D("2026-11-28", 0, 24)]),
        ("friday", [D("2026-12-04", 0, 6)]),
        ("next friday", [D("2026-12-04", 0, 11)]),
        ("this friday", [D("2026-12-04", 0, 11)]),
        ("on monday", [D("2026-12-07", 0, 9)]),  // said on a Monday: next week's
        ("last friday", [D("2026-11-27", 0, 11)]),
        ("last monday", [D("2026-11-23", 0, 11)]),
        ("I plan to leave on Saturday.", [D("2026-12-05", 16, 27)]),
        ("My vacation starts tomorrow.", [D("2026-12-01", 19, 27)]),
        ("March 3rd", [D("2027-03-03", 0, 9)]),  // passed this year: next year's
        ("3rd of March", [D("2027-03-03", 0, 12)]),
        ("the 3rd of march", [D("2027-03-03", 0, 16)]),
        ("march 3 2027", [D("2027-03-03", 0, 12)]),
        ("May 13, 2020", [D("2020-05-13", 0, 12)]),
        ("13 May 2020", [D("2020-05-13", 0, 11)]),
        ("December 24", [D("2026-12-24", 0, 11)]),
        ("december the twenty fourth", [D("2026-12-24", 0, 26)]),
        ("on the 5th", [D("2026-12-05", 0, 10)]),
        ("2026-12-24", [D("2026-12-24", 0, 10)]),
        ("12/24/2026", [D("2026-12-24", 0, 10)]),
        ("24/12/2026", [D("2026-12-24", 0, 10)]),
        ("1/2", [D("2027-01-02", 0, 3)]),
        ("in 3 days", [D("2026-12-03", 0, 9)]),
        ("in three weeks", [D("2026-12-21", 0, 14)]),
        ("two weeks ago", [D("2026-11-16", 0, 13)]),
        ("in a month", [D("2026-12-30", 0, 10)]),
        ("next week", [D("2026-12-07", 0, 9)]),
        ("last week", [D("2026-11-23", 0, 9)]),
        ("next month", [D("2026-12-01", 0, 10)]),
        ("next year", [D("2027-01-01", 0, 9)]),
        ("this weekend", [D("2026-12-05", 0, 12)]),
        ("in january", [D("2027-01-01", 0, 10)]),
        ("2026-02-30", [N("2026", 0, 4), N("2", 5, 7), N("30", 8, 10)]),  // no such day: just numbers
    ])
    fileprivate func dates(text: String, expected: [Expected]) {
        #expect(found(text) == expected.map(\.description), "\(text)")
    }

    @Test(arguments: [
        ("5pm", [T("17:00:00", 0, 3)]),
        ("5 p.m.", [T("17:00:00", 0, 6)]),
        ("5 am", [T("05:00:00", 0, 4)]),
        ("12am", [T("00:00:00", 0, 4)]),
        ("12pm", [T("12:00:00", 0, 4)]),
        ("at 7:30", [T("07:30:00", 0, 7)]),
        ("17:45", [T("17:45:00", 0, 5)]),
        ("6:30 PM", [T("18:30:00", 0, 7)]),
        ("23:30:22", [T("23:30:22", 0, 8)]),
        ("noon", [T("12:00:00", 0, 4)]),
        ("at midnight", [T("00:00:00", 0, 11)]),
        ("half past six", [T("06:30:00", 0, 13)]),
        ("quarter to nine", [T("08:45:00", 0, 15)]),
        ("ten past five pm", [T("17:10:00", 0, 16)]),
        ("twenty past seven", [T("07:20:00", 0, 17)]),
        ("5 to 7", [N("5", 0, 1), N("7", 5, 6)]),
        ("at 5 o'clock", [T("05:00:00", 0, 12)]),
        ("seven thirty in the evening", [T("19:30:00", 0, 27)]),
        ("at seven oh five", [T("07:05:00", 0, 16)]),
        ("eleven at night", [T("23:00:00", 0, 15)]),
        ("The store closes at 8PM", [T("20:00:00", 17, 23)]),
        ("in 10 minutes", [D("2026-11-30", 0, 13), T("10:25:00", 0, 13)]),
        ("in an hour", [D("2026-11-30", 0, 10), T("11:15:00", 0, 10)]),
        ("in half an hour", [D("2026-11-30", 0, 15), T("10:45:00", 0, 15)]),
        ("two hours from now", [D("2026-11-30", 0, 18), T("12:15:00", 0, 18)]),
        ("in 14 hours", [D("2026-12-01", 0, 11), T("00:15:00", 0, 11)]),
        ("Are you open today at 5?", [D("2026-11-30", 13, 18), T("05:00:00", 19, 23)]),
        ("wake me tomorrow at 5pm", [D("2026-12-01", 8, 16), T("17:00:00", 17, 23)]),
        ("on Monday at 4pm", [D("2026-12-07", 0, 9), T("16:00:00", 10, 16)]),
        ("at 5 percent", [P("5", 3, 12)]),
        ("tonight at 8", [D("2026-11-30", 0, 7), T("20:00:00", 8, 12)]),
        ("this morning", [T("06:00:00", 0, 12), T("12:00:00", 0, 12)]),
        ("in the evening", [T("18:00:00", 0, 14), T("22:00:00", 0, 14)]),
        ("tomorrow afternoon", [D("2026-12-01", 0, 8), T("12:00:00", 9, 18), T("18:00:00", 9, 18)]),
        ("friday at night", [D("2026-12-04", 0, 6), T("22:00:00", 7, 15), T("23:59:59", 7, 15)]),
        ("good morning", []),
        ("set an alarm for 6:45 tomorrow morning",
         [T("06:45:00", 17, 21), D("2026-12-01", 22, 30), T("06:00:00", 31, 38), T("12:00:00", 31, 38)]),
        ("this evening at 7:30", [T("18:00:00", 0, 12), T("22:00:00", 0, 12), T("19:30:00", 13, 20)]),
        ("tonight at 8 am", [D("2026-11-30", 0, 7), T("08:00:00", 8, 15)]),
        ("tonight at 9 o'clock", [D("2026-11-30", 0, 7), T("21:00:00", 8, 20)]),
        ("seven thirty", [N("7", 0, 5), N("30", 6, 12)]),
        ("25:00", [N("25", 0, 2), N("0", 3, 5)]),
    ])
    fileprivate func times(text: String, expected: [Expected]) {
        #expect(found(text) == expected.map(\.description), "\(text)")
    }

    @Test(arguments: [
        ("😀 5", [N("5", 2, 3)]),
        ("e\u{301} 5", [N("5", 3, 4)]),
        ("👩‍👩‍👧 7", [N("7", 6, 7)]),
        ("café tomorrow", [D("2026-12-01", 5, 13)]),
        ("５", []),  // full-width digits are not ASCII numbers
    ])
    fileprivate func offsetsCountUnicodeScalars(text: String, expected: [Expected]) {
        #expect(found(text) == expected.map(\.description), "\(text)")
    }

    @Test func metadataFollowsWatson() {
        let r = all.extract(from: "twenty five", now: monday, timeZone: utc)
        #expect(r.first?.metadata?["numeric_value"] == .number(25))
        #expect(r.first?.literal == "twenty five")
        #expect(r.first?.confidence == 1)
        let c = all.extract(from: "$10", now: monday, timeZone: utc)
        #expect(c.first?.metadata?["unit"] == .string("USD"))
        let d = all.extract(from: "Are you open today at 5?", now: monday, timeZone: utc)
        #expect(d.count == 2)
        #expect(d[0].metadata?["calendar_type"] == .string("GREGORIAN"))
        #expect(d[0].metadata?["datetime_link"] == .string("datetime_link_13_23"))
        #expect(d[1].metadata?["datetime_link"] == .string("datetime_link_13_23"))
        #expect(d[1].literal == "at 5")
        let m = all.extract(from: "call me tomorrow morning", now: monday, timeZone: utc)
        #expect(m.map { $0.metadata?["datetime_link"] } == Array(repeating: .string("datetime_link_8_24"), count: 3))
        let rel = all.extract(from: "in 10 minutes", now: monday, timeZone: utc)
        #expect(rel.map { $0.metadata?["datetime_link"] } == Array(repeating: .string("datetime_link_0_13"), count: 2))
        #expect(all.extract(from: "at 5 and 6 tomorrow", now: monday, timeZone: utc)[0].metadata?["datetime_link"] == nil)
    }

    @Test func onlyEnabledEntitiesAreReported() {
        let numbers = SystemEntityExtractor(enabled: ["sys-number", "sys-unknown"])
        #expect(found("March 3rd at 5pm, 50%", numbers)
            == ["sys-number=3@[6,9)", "sys-number=5@[13,14)", "sys-number=50@[18,20)"])
        let dates = SystemEntityExtractor(enabled: ["sys-date"])
        #expect(found("in 10 minutes", dates) == ["sys-date=2026-11-30@[0,13)"])
        #expect(found("anything 5", SystemEntityExtractor(enabled: [])) == [])
    }

    @Test func relativeMentionsUseTheGivenTimeZone() {
        // 03:00 UTC on Monday is 19:00 on Sunday in Los Angeles.
        let early = Date(timeIntervalSince1970: 1_796_007_600)
        let la = TimeZone(identifier: "America/Los_Angeles")!
        #expect(found("today", now: early, tz: la) == ["sys-date=2026-11-29@[0,5)"])
        #expect(found("in 10 minutes", now: early, tz: la)
            == ["sys-date=2026-11-29@[0,13)", "sys-time=19:10:00@[0,13)"])
        #expect(found("today", now: early, tz: utc) == ["sys-date=2026-11-30@[0,5)"])
    }

    @Test func neverCrashesAndStaysInsideTheText() {
        var rng = SplitMix64(seed: 42)
        let pieces = ["1", "9999999999999999999999", ",", ".", ":", "-", "/", "%", "$", " ", "a", "the", "hundred",
                      "and", "point", "twenty", "first", "at", "in", "on", "march", "pm", "p", "m", "o", "'",
                      "half", "past", "to", "days", "ago", "😀", "e\u{301}", "\u{0}", "ｱ", "\n", "dozen", "minus",
                      "next", "friday", "2026", "12", "31", "99", "minutes", "from", "now", "thousand", "million"]
        for _ in 0..<3000 {
            var s = ""
            for _ in 0..<Int(rng.next() % 12) { s += pieces[Int(rng.next() % UInt64(pieces.count))] }
            let count = s.unicodeScalars.count
            let r = all.extract(from: s, now: monday, timeZone: utc)
            for e in r {
                #expect(e.start >= 0 && e.start < e.end && e.end <= count, "\(s.debugDescription)")
            }
            #expect(r.map(\.start) == r.map(\.start).sorted())
        }
        _ = all.extract(from: String(repeating: "nine hundred ninety nine trillion ", count: 50), now: monday,
                        timeZone: utc)
        _ = all.extract(from: "in 99999999999999999999 days", now: .distantFuture, timeZone: utc)
        _ = all.extract(from: "10000 years ago", now: .distantPast, timeZone: utc)
        // Long runs must stay linear and shallow (no recursion per word).
        for unit in ["minus ", "- ", "-", "1,", "a hundred and ", "at ", "in ", "on the ", "half past ", "1/"] {
            _ = all.extract(from: String(repeating: unit, count: 20_000), now: monday, timeZone: utc)
        }
        _ = all.extract(from: "in 5 minutes", now: Date(timeIntervalSince1970: 1e300), timeZone: utc)
    }
}

