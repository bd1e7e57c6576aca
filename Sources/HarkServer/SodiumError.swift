/// A libsodium call that failed: the C function, its return code and what it means here.
public struct SodiumError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The libsodium function that failed, e.g. `crypto_pwhash_str`.
    public var function: String
    /// What it returned (libsodium returns -1 on failure and sets no errno worth reporting).
    public var code: Int32
    /// A readable explanation.
    public var message: String

    public init(function: String, code: Int32, message: String) {
        self.function = function
        self.code = code
        self.message = message
    }

    public var description: String { "\(function) failed (\(code)): \(message)" }
}
