import Foundation
import HarkAudio
import Testing
@testable import HarkCore

@Suite struct ExpressionPerformanceTests {
    static let conditions = [
        "@appliance:lights && $appl_action == \"on\" && $lightonoff == \"on\"", "#turn_on", "!@genre && @appliance:music",
        "entities.size()>1", "intents[0].confidence<0.51", "@sys-number < 1 || @sys-number > 5 || @zero_match",
        "$current_process == \"CC_Bill_Payment\" && $current_step == \"Payment_Date\"", "input.text.find('5624')",
        "@sys-time.before('07:00:00') || @sys-time.after('19:00:00')", "$cc_paydate.after($acc_paydue)",
    ]

    /// A turn evaluates about 100 conditions; 1,000 turns' worth must stay well under a second per hundred turns.
    /// A guard against a slow path creeping into the hot one (ten times the usual cost in a debug build), not a
    /// speed claim: it counts this thread's processor time, so other work on the machine cannot fail it, as the
    /// wall clock did once (5.6 s while the machine ran two decoders as well).
    @Test func conditionsEvaluateFast() throws {
        let compiled = try Self.conditions.map(CompiledExpression.parse)
        let scope = ExpressionFixture.scope
        var trues = 0
        let start = ThreadTime.cpuSeconds()
        for _ in 0..<10_000 {
            for c in compiled where c.isTrue(in: scope) { trues += 1 }
        }
        let seconds = ThreadTime.cpuSeconds() - start
        #expect(trues == 10_000 * 2)  // `#turn_on` and `entities.size()>1`
        #expect(seconds < 5, "100,000 condition evaluations took \(seconds) processor seconds")
    }

    @Test func concurrentEvaluationIsSafe() async throws {
        let e = try CompiledExpression.parse(
            "now().reformatDateTime('EEE, d MMM yyyy') + input.text.extract('([A-Z][a-z]+)', 1) + $date.reformatDateTime('EEEE')")
        let scope = ExpressionFixture.scope
        let results = await withTaskGroup(of: String.self) { group in
            for _ in 0..<16 {
                group.addTask {
                    var last = ""
                    for _ in 0..<200 { last = (try? e.evaluate(in: scope))?.stringValue ?? "error" }
                    return last
                }
            }
            var all: [String] = []
            for await r in group { all.append(r) }
            return all
        }
        #expect(Set(results) == ["Mon, 30 Nov 2026TurnThursday"])
    }
}
