import Foundation

/// Which line of a chip: by offset, or by the name the device tree / gpio-sim gives it.
public enum GPIOLineSelector: Sendable, Equatable, CustomStringConvertible {
    case offset(UInt32)
    case name(String)
    public var description: String {
        switch self {
        case .offset(let o): "offset \(o)"
        case .name(let n): "line \"\(n)\""
        }
    }
}

/// How one named device uses one line.
public struct GPIOLineRequest: Sendable, Equatable {
    /// The device name (`light`), also the consumer label the kernel shows for the line.
    public var name: String
    public var line: GPIOLineSelector
    /// The line is active when low (an LED wired to 3.3 V, a button pulling to ground).
    public var activeLow: Bool
    /// Outputs: the state driven when the line is requested.
    public var initial: Bool
    /// Inputs: edges closer together than this are contact bounce and are merged.
    public var debounce: Duration

    public init(name: String, line: GPIOLineSelector, activeLow: Bool = false, initial: Bool = false, debounce: Duration = .milliseconds(30)) {
        self.name = name
        self.line = line
        self.activeLow = activeLow
        self.initial = initial
        self.debounce = debounce
    }
}

/// A GPIO chip that hands out lines: `GPIODChip` (libgpiod, `/dev/gpiochipN`) or `SimulatedGPIOChip`.
public protocol GPIOChip: AnyObject, Sendable {
    /// The chip's name (`gpiochip0`) or `simulated`.
    var name: String { get }
    /// Requests `request.line` as an output driven to `request.initial`.
    func output(_ request: GPIOLineRequest) throws(GPIOError) -> any DigitalOutput
    /// Requests `request.line` as an input with edge events on both edges.
    func input(_ request: GPIOLineRequest) throws(GPIOError) -> any DigitalInput
}
