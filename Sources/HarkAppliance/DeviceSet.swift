import Foundation
import Synchronization
import HarkDevices

/// The appliance's devices by name: GPIO outputs (`light`, `led`), the push-to-talk button and the camera,
/// each real or simulated. Built once at start-up; the dialog's actions and the API reach devices only
/// through it.
public final class DeviceSet: Sendable {
    public let outputs: [String: any DigitalOutput]
    /// The context variable each output's state is published under (`light` → `light_state`).
    public let contextVariables: [String: String]
    public let button: (any DigitalInput)?
    public let camera: (any Camera)?
    /// One line per device saying what it is (`light: gpiochip0 offset 17`, `camera: simulated 640×480`).
    public let descriptions: [String]
    /// The devices served by a simulated twin because the real one is absent (or simulation was asked for).
    public let simulated: [String]
    /// Held for each device command (`commandsInOrder`): turns run concurrently, but the devices they act on
    /// take one command at a time, in the order the commands reach them, as when turns ran one at a time.
    private let commandLock = Mutex(())
    /// Pictures asked for at the same time share a capture (the camera's captures are not device commands in
    /// the sense above: the camera serialises its own, and a capture does not hold the other devices).
    public let captureRounds = CaptureRounds()

    public init(
        outputs: [String: any DigitalOutput], contextVariables: [String: String] = [:], button: (any DigitalInput)?,
        camera: (any Camera)?, descriptions: [String] = [], simulated: [String] = []
    ) {
        self.outputs = outputs
        var variables = contextVariables
        for name in outputs.keys where variables[name] == nil { variables[name] = "\(name)_state" }
        self.contextVariables = variables
        self.button = button
        self.camera = camera
        self.descriptions = descriptions
        self.simulated = simulated
    }

    /// Runs `body` (a command on one or more devices) while no other command runs.
    public func commandsInOrder<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        try commandLock.withLock { _ throws(E) -> T in try body() }
    }

    /// Device names as dialog actions use them.
    public var names: [String] { outputs.keys.sorted() + (camera == nil ? [] : [Self.cameraName]) }

    /// Each output's state as the line reports it now, keyed by its context variable (`"on"`/`"off"`);
    /// a line that cannot be read is left out and reported in `failures`.
    public func states() -> (states: [String: Bool], failures: [String]) {
        var states: [String: Bool] = [:]
        var failures: [String] = []
        for (name, output) in outputs {
            do { states[name] = try output.read() } catch { failures.append("\(name): \(error.message)") }
        }
        return (states, failures)
    }
}
