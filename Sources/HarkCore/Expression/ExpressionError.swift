import Foundation

/// A parse or evaluation failure of a dialog expression, naming where in the source it happened.
public struct ExpressionError: Error, Sendable, CustomStringConvertible, Equatable {
    /// What went wrong, e.g. "unexpected ')' at offset 12".
    public var message: String
    /// The expression (or template) text.
    public var source: String
    /// Character offset in `source`, when known.
    public var offset: Int?

    public init(message: String, source: String, offset: Int? = nil) {
        self.message = message
        self.source = source
        self.offset = offset
    }

    public var description: String { "\(message) in `\(source)`" }
}
