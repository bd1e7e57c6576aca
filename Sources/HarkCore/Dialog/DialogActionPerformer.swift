import Foundation

/// Runs a dialog node's client actions while the turn is being answered: the appliance's devices.
///
/// The dialog calls `perform` for each `client` action of a node that fires, in array order, after the
/// node's `context` is applied and before its output is rendered, so the output may already use the
/// result (docs/device-actions.md). Without a performer the actions are only returned, as Watson does.
public protocol DialogActionPerformer {
    /// Performs `action` and returns the value for its `result_variable`: the device's real state after
    /// the command (read back from the device), or a picture's path.
    func perform(_ action: DialogAction) throws(DialogActionFailure) -> JSONValue
}

/// Why an action did not run: an unknown device or command, or the device's own error. The message goes
/// into `output.log_messages` at level `error`, and the action's `result_variable` is left untouched.
public struct DialogActionFailure: Error, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// Resolves Watson's spellings of a context variable name: `$name`, `context.name` and `name`.
public func contextVariableName(_ spelled: String) -> String {
    var name = Substring(spelled.trimmingWhitespace())
    if name.hasPrefix("$") { name = name.dropFirst() }
    if name.hasPrefix("context.") { name = name.dropFirst("context.".count) }
    return String(name)
}
