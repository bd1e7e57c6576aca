import Foundation
import Testing
@testable import HarkCore

/// Every condition, `<? ?>` expression and `$var`/`@entity` reference in IBM's sample exports must parse.
@Suite struct ExpressionWorkspaceTests {
    /// Collects every string inside an output or context value.
    static func strings(in value: JSONValue, into out: inout [String]) {
        switch value {
        case .string(let s): out.append(s)
        case .array(let a): for v in a { strings(in: v, into: &out) }
        case .object(let o): for (_, v) in o.pairs { strings(in: v, into: &out) }
        default: break
        }
    }

    @Test(arguments: ["car-dashboard", "bank-simple", "serverless-home-automation"])
    func everyExpressionParses(workspace: String) throws {
        let url = Fixtures.watson(workspace)
        let json = try JSONValue.parse(Data(contentsOf: url))
        let nodes = try #require(json["dialog_nodes"]?.arrayValue)
        #expect(!nodes.isEmpty)
        var conditions = 0, templates = 0, substituting = 0
        var unsupported: [String] = []
        for node in nodes {
            if let c = node["conditions"]?.stringValue, !WorkspaceDecoder.specialConditions.contains(c.trimmingCharacters(in: .whitespaces)) {
                let e = try CompiledExpression.parse(c)
                unsupported += e.unsupportedFeatures
                // A condition must evaluate without crashing in an empty turn.
                _ = e.isTrue(in: ExpressionScope(now: ExpressionFixture.now))
                conditions += 1
            }
            var texts: [String] = []
            if let output = node["output"] { Self.strings(in: output, into: &texts) }
            if let context = node["context"] { Self.strings(in: context, into: &texts) }
            for text in texts {
                let t = try Template.parse(text)
                unsupported += t.unsupportedFeatures
                templates += 1
                if !t.isConstant { substituting += 1 }
                _ = t.render(in: ExpressionFixture.scope)
            }
        }
        #expect(conditions > 0)
        #expect(templates > 0)
        #expect(substituting > 0)
        // Everything these exports use is implemented.
        #expect(unsupported.isEmpty, "\(unsupported)")
    }

    @Test func carDashboardTimeResponseRenders() throws {
        let t = try Template.parse(
            "Ok, let's go to the restaurant at <?$time.reformatDateTime('h:mm a') ?>, on <? $date.reformatDateTime('EEE, d MMM yyyy') ?>.")
        #expect(t.render(in: ExpressionFixture.scope) == "Ok, let's go to the restaurant at 5:05 PM, on Thu, 24 Dec 2026.")
    }

    @Test func bankPaymentSentenceRenders() throws {
        var scope = ExpressionFixture.scope
        scope.context["cc_payamt"] = 120.5
        scope.context["cc_paydate"] = "2026-12-03"
        scope.context["cc_chosen"] = "5624"
        let t = try Template.parse(
            "Okay, we'll make a payment of $$cc_payamt on <? $cc_paydate.reformatDateTime('EEE, MMM d, yyyy') ?> to credit card $cc_chosen. Is this information correct?")
        #expect(t.render(in: scope)
            == "Okay, we'll make a payment of $120.5 on Thu, Dec 3, 2026 to credit card 5624. Is this information correct?")
        let c = try CompiledExpression.parse("$cc_payamt > $acc_minamt || $cc_payamt == $acc_minamt")
        scope.context["acc_minamt"] = 25
        #expect(c.isTrue(in: scope))
        let d = try CompiledExpression.parse("$cc_paydate.after($acc_paydue)")
        scope.context["acc_paydue"] = "2026-12-10"
        #expect(!d.isTrue(in: scope))
    }
}
