import Foundation
import Testing
@testable import HarkCore

/// Random input must never trap the parser or evaluator: it either parses or throws `ExpressionError`.
@Suite struct ExpressionFuzzTests {

    static let pieces = [
        "@", "#", "$", "(", ")", "[", "]", "{", "}", "'", "\"", ".", "?.", "?", ":", "!", "&&", "||", "==", "<", ">=",
        "+", "-", "*", "/", "%", "^", ",", " ", "a", "sys-number", "city", "name", "list", "0", "1.5", "5L", "true",
        "null", "and", "not", "contains(", "size()", "append(", "reformatDateTime('h:mm a')", "plusDays(1)", "now()",
        "entities", "intents[0]", "context", "input.text", "\\", "<?", "?>", ".![", ".?[", "#this", "new ", "T(",
        "é", "😀", "\u{0}", "'2026-11-30'", "'17:05:00'", "find('[a-z]+')", "extract('(x", "-", "matches",
    ]

    @Test(arguments: [1, 2, 3, 4])
    func randomExpressionsNeverTrap(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        let scope = ExpressionFixture.scope
        var parsed = 0
        for _ in 0..<2_500 {
            let count = Int.random(in: 1...12, using: &rng)
            var s = ""
            for _ in 0..<count { s += Self.pieces.randomElement(using: &rng)! }
            if let e = try? CompiledExpression.parse(s) {
                parsed += 1
                _ = e.isTrue(in: scope)
                _ = try? e.evaluate(in: scope)
            }
            if let t = try? Template.parse(s) {
                _ = t.render(in: scope)
                _ = try? t.value(in: scope)
            }
        }
        #expect(parsed > 0)
    }

    @Test func randomCharactersNeverTrap() {
        var rng = SplitMix64(seed: 42)
        let alphabet = Array("@#$()[]{}'\".?:!&|=<>+-*/%^, abc019_\\é\n\t")
        for _ in 0..<3_000 {
            let s = String((0..<Int.random(in: 0...20, using: &rng)).map { _ in alphabet.randomElement(using: &rng)! })
            _ = try? CompiledExpression.parse(s).isTrue(in: ExpressionFixture.scope)
            _ = try? Template.parse(s).render(in: ExpressionFixture.scope)
        }
    }

    @Test func deepNestingIsAnErrorNotACrash() throws {
        let deep = String(repeating: "(", count: 5_000) + "1" + String(repeating: ")", count: 5_000)
        #expect(throws: ExpressionError.self) { try CompiledExpression.parse(deep) }
        let bangs = String(repeating: "!", count: 5_000) + "true"
        #expect(throws: ExpressionError.self) { try CompiledExpression.parse(bangs) }
        let nested = String(repeating: "-", count: 150) + "1"
        #expect(try CompiledExpression.parse(nested).evaluate(in: ExpressionFixture.scope) == 1)
    }
}
