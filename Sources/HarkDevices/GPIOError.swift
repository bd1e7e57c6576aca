import Foundation

/// A libgpiod failure (or the simulator's equivalent): the C function, `errno`, and what it means here.
public struct GPIOError: Error, Sendable, CustomStringConvertible {
    /// The C function that failed (`gpiod_chip_open_lookup`), or the simulator's operation.
    public var function: String
    /// `errno` as the call left it (0 when the failure is not a system error).
    public var code: Int32
    /// A readable message that names the chip and line: `gpiochip0 offset 17 (light): line busy (…)`.
    public var message: String

    public init(function: String, code: Int32, message: String) {
        self.function = function
        self.code = code
        self.message = message
    }

    public var description: String { message }
}
