import Foundation

/// A debounced edge of an input line: a push-to-talk button pressed or released.
public struct ButtonEvent: Sendable, Equatable {
    public enum Edge: String, Sendable { case pressed, released }
    public var edge: Edge
    /// When the kernel (or the simulator) saw the edge.
    public var time: Date
    public init(edge: Edge, time: Date) {
        self.edge = edge
        self.time = time
    }
}

/// A named input line with edge events: the push-to-talk button.
///
/// Implementations: `GPIODInput` (a libgpiod line requested for both edges) and the simulated chip's line.
/// Safe to use from any thread; one thread at a time waits for events.
public protocol DigitalInput: AnyObject, Sendable {
    /// The configured device name (`button`).
    var name: String { get }
    /// `true` while the input is active (pressed), whatever the line's polarity.
    func read() throws(GPIOError) -> Bool
    /// Waits up to `timeout` for the next debounced edge; `nil` when none came.
    func nextEvent(timeout: Duration) throws(GPIOError) -> ButtonEvent?
}
