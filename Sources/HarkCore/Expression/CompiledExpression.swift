import Foundation

/// A parsed condition or `<? ?>` expression.
///
/// Parse once (at workspace load), evaluate on every turn: evaluation walks a prebuilt tree, resolves
/// methods through an enum and reuses cached regular expressions and date formatters.
public struct CompiledExpression: Sendable {
    public let source: String
    let root: ExpressionNode
    /// Names of methods/functions used that Hark does not implement (for load-time warnings); empty when
    /// all are supported.
    public let unsupportedFeatures: [String]

    init(source: String, root: ExpressionNode, unsupportedFeatures: [String]) {
        self.source = source
        self.root = root
        self.unsupportedFeatures = unsupportedFeatures
    }

    public static func parse(_ source: String) throws(ExpressionError) -> CompiledExpression {
        let (root, unsupported) = try ExpressionParser.parse(source)
        return CompiledExpression(source: source, root: root, unsupportedFeatures: unsupported)
    }

    /// The expression's value. Runtime errors (unknown method, bad operand types, index out of range) throw.
    public func evaluate(in scope: ExpressionScope) throws(ExpressionError) -> JSONValue {
        try ExpressionEvaluator(scope: scope, source: source, element: nil).evaluate(root)
    }

    /// Watson truthiness of the value (see `JSONValue.isTruthy`); a runtime error counts as false, as a
    /// failing condition does in Watson.
    public func isTrue(in scope: ExpressionScope) -> Bool {
        do {
            return try evaluate(in: scope).isTruthy
        } catch {
            return false
        }
    }
}
