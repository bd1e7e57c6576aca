import Foundation

/// A named on/off output line: the light, the listening LED.
///
/// Implementations: `GPIODOutput` (a libgpiod line) and the simulated chip's line. Each is safe to use from
/// any thread (the appliance drives the LED from its loop while a web request switches the light).
public protocol DigitalOutput: AnyObject, Sendable {
    /// The configured device name (`light`, `led`).
    var name: String { get }
    /// Drives the line: `true` is active, whatever the line's polarity (active-low is applied below).
    func set(_ active: Bool) throws(GPIOError)
    /// The line's state as the chip reports it now, read back rather than remembered.
    func read() throws(GPIOError) -> Bool
}
