import CPocketSphinx

/// A PocketSphinx (or sphinxbase) call that failed: which C function, the code it returned, and what it
/// means. The library logs its own reasons, but Hark silences that log, so the message says what was asked.
public struct PocketSphinxError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The C function that failed, e.g. `ps_init`.
    public var function: String
    /// Its return code (`-1` when it returned a null pointer).
    public var code: Int32
    public var message: String

    public init(function: String, code: Int32, message: String) {
        self.function = function
        self.code = code
        self.message = message
    }

    public var description: String { "\(function) failed (\(code)): \(message)" }

    /// Throws unless `code` is non-negative, the convention of `ps_start_utt`, `ps_process_raw` and friends.
    @discardableResult
    static func check(_ code: Int32, _ function: String, _ message: @autoclosure () -> String) throws(PocketSphinxError) -> Int32 {
        guard code >= 0 else { throw PocketSphinxError(function: function, code: code, message: message()) }
        return code
    }
}
