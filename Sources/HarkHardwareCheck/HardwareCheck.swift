import Foundation

/// One check of the hardware lane: a name (`gpio.output`), what it proves, and the code that proves it.
///
/// `run` returns one line of detail on success and throws on failure; any error counts (a `CheckFailure`
/// from an expectation, or a backend's own error, whose message is then the detail).
struct HardwareCheck: Sendable {
    let name: String
    /// What the check proves, for `--list`.
    let summary: String
    let run: @Sendable (CheckContext) throws -> String
}

/// An expectation the kernel's behaviour did not meet.
struct CheckFailure: Error, CustomStringConvertible {
    let message: String
    init(_ message: String) { self.message = message }
    var description: String { message }
}

/// Fails the check with `message` unless `condition` holds.
func expect(_ condition: Bool, _ message: @autoclosure () -> String) throws(CheckFailure) {
    if !condition { throw CheckFailure(message()) }
}

/// Runs `body`, which must throw an error of type `E`; returns it so the check can look at its message.
func expectError<E: Error>(_ type: E.Type, _ what: String, _ body: () throws -> Void) throws -> E {
    do {
        try body()
    } catch let error as E {
        return error
    } catch {
        throw CheckFailure("\(what): expected \(E.self), got \(Swift.type(of: error)): \(error)")
    }
    throw CheckFailure("\(what): succeeded, but it must fail")
}

/// Polls `condition` every 10 ms until it holds or `timeout` passes; returns whether it held.
func wait(upTo timeout: Duration, for condition: () throws -> Bool) rethrows -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    while true {
        if try condition() { return true }
        if clock.now >= deadline { return false }
        Thread.sleep(forTimeInterval: 0.01)
    }
}
