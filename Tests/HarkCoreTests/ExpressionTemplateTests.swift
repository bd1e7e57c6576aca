import Foundation
import Testing
@testable import HarkCore

@Suite struct ExpressionTemplateTests {
    @Test(arguments: [
        ("Hello $name!", "Hello Ana!"),
        ("Count: $count, flag $flag", "Count: 2, flag true"),
        ("No $missing here", "No  here"),
        ("Pay $$amount now", "Pay $50 now"),
        ("$150 bonus and $ 0.00", "$150 bonus and $ 0.00"),
        ("Write to help@bank.com", "Write to help@bank.com"),
        ("Literal \\$name and \\@city", "Literal $name and @city"),
        ("Playing @genre on the @appliance.", "Playing jazz on the lights."),
        ("Navigating to restroom @sys-number on the list.", "Navigating to restroom 5 on the list."),
        ("From @city.literal (@city.values)", "From Toronto ([\"Toronto\",\"Boston\"])"),
        ("You said @sys-number.literal, @missing.", "You said five, ."),
        ("List: $list", "List: [\"a\",\"b\"]"),
        ("Hi $user.first, zip $name.", "Hi John, zip Ana."),
        ("Not a field: $name.length", "Not a field: Ana.length"),
        ("Var $(card-type) ok", "Var VISA ok"),
        ("Cards:$card_type", "Cards:MASTER CARD"),
        ("Total <?$count+1?>", "Total 3"),
        ("It is <? now().reformatDateTime('h:mm a') ?>, on <? now().reformatDateTime('EEE, d MMM yyyy') ?>.", "It is 12:20 PM, on Mon, 30 Nov 2026."),
        ("Airports: <? @city.values.join(', ') ?>.", "Airports: Toronto, Boston."),
        ("Broken <? $name.nope() ?> end", "Broken  end"),
        ("Null <? $missing ?> end", "Null  end"),
        ("Price <? 2.5 * 2 ?> and <? 7.5 / 2 ?> and <? 7 / 2 ?>", "Price 5 and 3.75 and 3"),
        ("#hashtag stays", "#hashtag stays"),
        ("Just text", "Just text"),
        ("", ""),
    ] as [(String, String)])
    func render(text: String, expected: String) throws {
        #expect(try Template.parse(text).render(in: ExpressionFixture.scope) == expected, "\(text)")
    }

    @Test(arguments: [
        ("$count", 2), ("$list", ["a", "b"]), ("$user", ["first": "John", "tags": ["x"]]), ("$missing", .null),
        ("@sys-number", 5), ("@city.values", ["Toronto", "Boston"]), (" <? $count + 1 ?> ", 3),
        ("<? $list.append('c') ?>", ["a", "b", "c"]), ("<? $missing ?>", .null), ("<? @sys-date.values.size() ?>", 1),
        ("count is $count", "count is 2"), ("<? $count ?><? $count ?>", "22"), ("plain", "plain"),
        ("$user.first", "John"), ("$name.first", "Ana.first"), ("@city.literal", "Toronto"),
    ] as [(String, JSONValue)])
    func contextValues(text: String, expected: JSONValue) throws {
        #expect(try Template.parse(text).value(in: ExpressionFixture.scope) == expected, "\(text)")
    }

    @Test func valueThrowsWhenTheOnlyExpressionFails() throws {
        let t = try Template.parse("<? $count - 'x' ?>")
        #expect(throws: ExpressionError.self) { try t.value(in: ExpressionFixture.scope) }
    }

    @Test(arguments: [
        ("Hello", true), ("", true), ("\\$5", true), ("$$", true), ("a $x", false), ("@e", false), ("<? 1 ?>", false),
        ("100% #sure", true),
    ] as [(String, Bool)])
    func constancy(text: String, constant: Bool) throws {
        #expect(try Template.parse(text).isConstant == constant)
    }

    @Test func unsupportedFeaturesComeFromExpressions() throws {
        let t = try Template.parse("A <? T(Math).max($a, $b) ?> and <? $x.getRandomItem() ?> and <? new Date() ?>")
        #expect(t.unsupportedFeatures == ["T(Math)", "method max()", "new Date()"])
        #expect(try Template.parse("$a @b <? $c.size() ?>").unsupportedFeatures.isEmpty)
    }

    @Test(arguments: [
        ("Hi <? $a + ?> there", 11), ("Open <? 1 + 1", 5), ("x <? ?>", 4),
    ] as [(String, Int)])
    func parseErrorsPointIntoTheTemplate(text: String, offset: Int) {
        do {
            _ = try Template.parse(text)
            Issue.record("expected an error for \(text)")
        } catch {
            #expect(error.offset == offset, "\(error)")
            #expect(error.source == text)
            #expect(error.message.contains("offset \(offset)"), "\(error)")
        }
    }
}
