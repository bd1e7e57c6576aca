import Foundation
import Testing
@testable import HarkCore

/// A turn: "turn on the lights and play jazz, from Toronto to Boston, 5 tomorrow at 5:05 pm".
enum ExpressionFixture {
    static let now = Date(timeIntervalSince1970: 1_796_041_200)  // 2026-11-30 12:20:00 UTC (a Monday)

    static var scope: ExpressionScope {
        var context = JSONObject()
        context["name"] = "Ana"
        context["count"] = 2
        context["list"] = ["a", "b"]
        context["empty"] = ""
        context["user"] = ["first": "John", "tags": ["x"]]
        context["flag"] = true
        context["zero"] = 0
        context["amount"] = "50"
        context["card-type"] = "VISA"
        context["card_type"] = "MASTER CARD"
        context["date"] = "2026-12-24"
        context["time"] = "17:05:00"
        context["nested"] = ["array": ["one", "two"]]
        context["flights"] = [["time": "10:00", "code": "OK123"], ["time": "12:30", "code": "LH421"]]
        return ExpressionScope(
            inputText: "Turn on the lights and play jazz from Toronto to Boston",
            intents: [IntentScore(intent: "turn_on", confidence: 0.91), IntentScore(intent: "turn_up", confidence: 0.3)],
            entities: [
                EntityMatch(entity: "appliance", value: "lights", start: 12, end: 18, literal: "lights"),
                EntityMatch(entity: "genre", value: "jazz", start: 28, end: 32, literal: "jazz"),
                EntityMatch(entity: "city", value: "Toronto", start: 38, end: 45, confidence: 0.8, literal: "Toronto"),
                EntityMatch(entity: "city", value: "Boston", start: 49, end: 55, literal: "Boston"),
                EntityMatch(entity: "sys-number", value: "5", start: 56, end: 57, literal: "five",
                    metadata: JSONObject([("numeric_value", 5)])),
                EntityMatch(entity: "sys-date", value: "2026-12-01", start: 58, end: 66, literal: "tomorrow"),
                EntityMatch(entity: "sys-time", value: "17:05:00", start: 67, end: 74, literal: "5:05 pm"),
                EntityMatch(entity: "city_name", value: "New York", start: 0, end: 0, literal: "NYC"),
            ],
            context: context, now: now, timeZone: TimeZone(identifier: "UTC")!)
    }

    static func eval(_ source: String, _ scope: ExpressionScope = scope) throws -> JSONValue {
        try CompiledExpression.parse(source).evaluate(in: scope)
    }
}

@Suite struct ExpressionEvaluationTests {
    @Test(arguments: [
        // shorthand intents and entities
        ("#turn_on", true), ("#turn_up", false), ("!#turn_up", true), ("NOT #turn_on", false),
        ("#turn_up || #turn_on", true), ("#turn_on and #turn_up", false),
        ("@appliance", true), ("@missing", false), ("!@missing && @genre", true),
        ("@appliance:lights", true), ("@appliance:heater", false), ("@city:Boston", true), ("@city:Toronto", true),
        ("@city_name:(New York)", true), ("@city_name:(New  Jersey)", false), ("@sys-number:5", true),
        ("@sys-number > 4", true), ("@sys-number > 5", false), ("@sys-number < 1 || @sys-number > 5", false),
        ("@missing > 5", false), ("@missing < 5", false), ("@city == 'Toronto'", true), ("@city = \"Toronto\"", true),
        ("@city.contains('Tor')", true), ("@city && @city.confidence > 0.7", true), ("@city.confidence > 0.9", false),
        ("entities['city']?.contains('Boston')", true), ("entities['sys-number']", true), ("entities['nope']", false),
        ("entities.size() > 1", true), ("intents[0].confidence > 0.5", true), ("intents[0] == 'turn_on'", true),
        ("intent == 'turn_on'", true), ("intents.size() > 0 && intents[0] == 'turn_on' && intents[0].confidence > 0.1", true),
        // context
        ("$flag", true), ("$zero", false), ("$empty", false), ("$missing", false), ("$name", true),
        ("$name == 'Ana'", true), ("$name != \"Ana\"", false), ("$missing == null", true), ("$empty == \"\" || $empty == null", true),
        ("$count < 3", true), ("$count > 2", false), ("$count >= 2 && $count <= 2", true), ("$amount > 40", true),
        ("$amount == 50", true), ("$card_type:(MASTER CARD)", true), ("$(card-type) == 'VISA'", true),
        ("$card-type:VISA", true), ("context['name'] == 'Ana'", true), ("context.user.first == 'John'", true),
        ("$user.first == 'John'", true), ("$user.has('first')", true), ("$user.has('last')", false),
        ("$list.contains('b')", true), ("$list.contains('c')", false), ("$missing.contains('c')", false),
        ("$nested.array.get(0).getAsString().contains('one')", true),
        // input
        ("input.text.contains('jazz')", true), ("input.text.find('T[a-z]+o')", true), ("input.text.matches('[0-9]+')", false),
        ("input.text.startsWith('Turn')", true), ("input.text.endsWith('Boston')", true),
        ("input.text.find('5624') || input.text.find('play')", true),
        // literals and operators
        ("true", true), ("false", false), ("", false), ("   ", false), ("TRUE", true), ("null", false), ("1 < 2 ? true : false", true),
        ("'a' < 'b'", true), ("!(1 == 1)", false), ("1 == 1.0", true), ("'x' matches 'x+'", true), ("{1,2}.contains(2)", true),
        ("$date.after('2026-12-01')", true), ("@sys-date.before($date)", true), ("@sys-time.before('07:00:00') || @sys-time.after('19:00:00')", false),
        ("@sys-time.after('12:00:00')", true), ("now().before('12:00:00')", false), ("now().after(today())", true),
        ("'2026-11-30 17:05:00'.after('17:00:00')", true), ("@sys-date.before('17:00:00')", false),
        ("@sys-date.sameMoment('2026-12-01')", true), ("today().sameOrBefore(@sys-date)", true),
    ] as [(String, Bool)])
    func conditions(source: String, expected: Bool) throws {
        let e = try CompiledExpression.parse(source)
        #expect(e.isTrue(in: ExpressionFixture.scope) == expected, "\(source)")
        #expect(e.unsupportedFeatures.isEmpty)
    }

    @Test(arguments: [
        ("@sys-number", 5), ("@sys-number.value", 5), ("@sys-number.numeric_value", 5), ("@appliance", "lights"),
        ("@sys-number.literal", "five"), ("@city", "Toronto"), ("@city.values", ["Toronto", "Boston"]),
        ("@city.location", [38, 45]), ("@city.confidence", 0.8), ("@missing", .null), ("@missing.literal", .null),
        ("@sys-date.values.size()", 1), ("entities['city'][1].value", "Boston"), ("entities.city[0].literal", "Toronto"),
        ("entities[0].value", "lights"), ("entities[0].location", [12, 18]), ("intents[0].intent", "turn_on"),
        ("intents[1].confidence", 0.3), ("input.text.length()", 55), ("intent", "turn_on"),
        ("$count + 1", 3), ("context['count'] - 5", -3), ("$count * 2.5", 5), ("7 / 2", 3), ("7.0 / 2.5", 2.8),
        ("7 % 3", 1), ("-$count", -2), ("2 ^ 10", 1024), ("'n' + 1", "n1"), ("1 + 'n'", "1n"), ("$name + ' ' + $count", "Ana 2"),
        ("$missing + 'x'", "nullx"), ("$flag ? 'yes' : 'no'", "yes"), ("$missing ?: 'fallback'", "fallback"),
        ("$name ?: 'fallback'", "Ana"), ("{1, 'a'}", [1, "a"]), ("[]", []), ("5000000000L", 5_000_000_000), ("2.5d", 2.5),
        ("'it''s'", "it's"), ("\"say \\\"hi\\\"\"", "say \"hi\""), (".5 + 1", 1.5), ("1e3", 1000),
        // strings
        ("$name.toUpperCase()", "ANA"), ("$name.toLowerCase()", "ana"), ("'  pad  '.trim()", "pad"),
        ("$name.length()", 3), ("$name.size()", 3), ("$name.indexOf('n')", 1), ("$name.indexOf('z')", -1),
        ("'This is a text.'.substring(5, 15)", "is a text."), ("'hello'.substring(1)", "ello"), ("$empty.isEmpty()", true),
        ("$name.equals('Ana')", true), ("$name.equalsIgnoreCase('ANA')", true), ("$name.append('!')", "Ana!"),
        ("'Hello 123456'.extract('[\\d]+', 0)", "123456"), ("'ab12cd'.extract('([a-z]+)(\\d+)', 2)", "12"),
        ("'x'.extract('\\d', 0)", ""), ("'bananas;apples;pears'.split(';')", ["bananas", "apples", "pears"]),
        ("'a-b'.replace('-', '+')", "a+b"), ("'a1b22'.replaceAll('[0-9]+', '#')", "a#b#"), ("'abc'.charAt(1)", "b"),
        ("'42'.toInt() + 1", 43), ("'x'.toDouble()", .null), ("$count.toString()", "2"),
        // arrays and objects
        ("$list.append('c')", ["a", "b", "c"]), ("$list.append('c', 'd').size()", 4), ("$missing.append('x')", ["x"]),
        ("$list.join(', ')", "a, b"), ("$list.get(1)", "b"), ("$list[0]", "a"), ("$list.size()", 2), ("$list.isEmpty()", false),
        ("$list.indexOf('b')", 1), ("$list.set(0, 'z')", ["z", "b"]), ("$list.removeValue('a')", ["b"]),
        ("$user.get('first')", "John"), ("$user.size()", 2), ("$user.tags[0]", "x"), ("$flights.![code]", ["OK123", "LH421"]),
        ("$flights.?[time == '12:30'].size()", 1), ("$flights.^[time > '11:00'].code", "LH421"), ("{3,4,5}.![#this * 2]", [6, 8, 10]),
        ("@city.values.join(' and ')", "Toronto and Boston"), ("entities['city'].join('/')", "Toronto/Boston"),
        // dates
        ("now()", "2026-11-30 12:20:00"), ("today()", "2026-11-30"), ("now().reformatDateTime('h:mm a')", "12:20 PM"),
        ("now().reformatDateTime('EEE, d MMM yyyy')", "Mon, 30 Nov 2026"), ("$date.reformatDateTime('EEEE')", "Thursday"),
        ("'2026-11-30'.reformatDateTime('yyyy-MM-dd')", "2026-11-30"), ("@sys-date.reformatDateTime('MM-dd')", "12-01"),
        ("'2026-11-30'.reformatDateTime('MMM d, yyyy')", "Nov 30, 2026"), ("@sys-time.reformatDateTime('h:mm a')", "5:05 PM"),
        ("'2026-11-30 17:05:00'.reformatDateTime('EEE, MMM d, yyyy h:mm a')", "Mon, Nov 30, 2026 5:05 PM"),
        ("'2026-11-30'.reformatDateTime('u')", "1"), ("'2026-11-29'.reformatDateTime('u EEEE')", "7 Sunday"),
        ("'17:05:00'.reformatDateTime('yyyy-MM-dd HH:mm')", "1970-01-01 17:05"), ("'2026-11-30'.reformatDateTime('''week'' u')", "week 1"),
        ("today().plusDays(1)", "2026-12-01"), ("'2026-01-31'.plusMonths(1)", "2026-02-28"), ("'2024-02-29'.plusYears(1)", "2025-02-28"),
        ("'2026-03-01'.minusDays(1)", "2026-02-28"), ("now().plusMonths(3)", "2027-02-28 12:20:00"), ("'23:30:00'.plusMinutes(45)", "00:15:00"),
        ("'08:00:00'.minusMinutes(30)", "07:30:00"), ("now().minusHours(6).reformatDateTime('h:mm a')", "6:20 AM"),
        ("'2026-12-31 23:00:00'.plusHours(2)", "2027-01-01 01:00:00"), ("'2026-11-30'.plusWeeks(1)", "2026-12-07"),
        ("now().reformatDateTime('Y') + '-12-24'", "2026-12-24"),
    ] as [(String, JSONValue)])
    func values(source: String, expected: JSONValue) throws {
        #expect(try ExpressionFixture.eval(source) == expected, "\(source)")
    }

    @Test func nowUsesTheScopeTimeZone() throws {
        var scope = ExpressionFixture.scope
        scope.timeZone = TimeZone(identifier: "America/New_York")!
        #expect(try ExpressionFixture.eval("now()", scope) == "2026-11-30 07:20:00")
        scope.timeZone = TimeZone(identifier: "Pacific/Kiritimati")!  // UTC+14: already tomorrow
        #expect(try ExpressionFixture.eval("today()", scope) == "2026-12-01")
    }

    @Test func zeroNumberEntityIsFalseAsInWatson() throws {
        var scope = ExpressionFixture.scope
        scope.entities = [EntityMatch(entity: "sys-number", value: "0", start: 0, end: 1, literal: "0",
            metadata: JSONObject([("numeric_value", 0)]))]
        #expect(try CompiledExpression.parse("@sys-number").isTrue(in: scope) == false)
        #expect(try CompiledExpression.parse("@sys-number || @sys-number == 0").isTrue(in: scope))
        #expect(try CompiledExpression.parse("entities['sys-number']").isTrue(in: scope))
    }

    @Test func noIntentsMakesIntentTestsFalseNotErrors() throws {
        var scope = ExpressionFixture.scope
        scope.intents = []
        #expect(try CompiledExpression.parse("#turn_on").isTrue(in: scope) == false)
        #expect(try ExpressionFixture.eval("intent", scope) == .null)
        #expect(throws: ExpressionError.self) { try ExpressionFixture.eval("intents[0].confidence > 0.5", scope) }
        #expect(try CompiledExpression.parse("intents[0].confidence > 0.5").isTrue(in: scope) == false)
    }

    @Test(arguments: [
        "$name.frobnicate()", "$count - 'x'", "'abc'.substring(2, 9)", "$list[5]", "unknownThing == 1",
        "'x'.reformatDateTime('yyyy')", "'17:00:00'.plusDays(1)", "'2026-11-30'.plusHours(1)", "1 / 0",
        "'abc'.find('(')", "$name.extract('a', 3)", "$count.toUpperCase()", "new Date()", "T(Math).max(1, 2)",
        "foo()", "$list.get()",
    ])
    func runtimeErrorsThrowAndCountAsFalse(source: String) throws {
        let e = try CompiledExpression.parse(source)
        #expect(throws: ExpressionError.self) { try e.evaluate(in: ExpressionFixture.scope) }
        #expect(!e.isTrue(in: ExpressionFixture.scope))
    }

    @Test(arguments: [
        ("$name.frobnicate()", ["method frobnicate()"]), ("new JsonArray().append('x')", ["new JsonArray()"]),
        ("T(java.lang.String).format('%d', 1)", ["T(java.lang.String)", "method format()"]),
        ("foo(1) && $x.bar()", ["function foo()", "method bar()"]), ("now().plusDays(1)", []),
        ("new Random().nextInt(3)", ["new Random()", "method nextInt()"]),
    ] as [(String, [String])])
    func unsupportedFeaturesAreReported(source: String, features: [String]) throws {
        #expect(try CompiledExpression.parse(source).unsupportedFeatures == features)
    }

    @Test(arguments: [
        ("@appliance &&", 13, "end of expression"), ("(1 + 2", 6, "')'"), ("1 + * 2", 4, "a value"),
        ("$a == 'open", 6, "unterminated"), ("#", 0, "intent name"), ("1 2", 2, "an operator"),
        ("$x.", 3, "property or method"), ("a & b", 2, "&&"), ("@city:(New York", 6, "')'"), ("f(1,", 4, "a value"),
        ("1 ~ 2", 2, "'~'"), ("$", 0, "variable name"), ("{1, 2", 5, "'}'"),
    ] as [(String, Int, String)])
    func parseErrorsNameOffsetAndExpectation(source: String, offset: Int, mentions: String) {
        do {
            _ = try CompiledExpression.parse(source)
            Issue.record("expected a parse error for \(source)")
        } catch {
            #expect(error.offset == offset, "\(source): \(error)")
            #expect(error.message.contains(mentions), "\(source): \(error)")
            #expect(error.message.contains("offset \(offset)"))
            #expect(error.source == source)
            #expect(error.description == "\(error.message) in `\(source)`")
        }
    }
}
