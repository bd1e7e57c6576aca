import Foundation
import HarkDevices

/// A device the configuration names that cannot be opened: the message names it and says why.
public struct DeviceError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

extension DeviceSet {
    /// Opens the configured GPIO lines and camera.
    ///
    /// With `simulate` = `.auto`, a simulated twin is used only when the machine has no GPIO chip (or no
    /// video device) at all, and `simulated` says so; a machine that has chips but not the configured one,
    /// or a busy or missing line, is an error naming it — a typo must not silently become a simulation.
    public static func open(_ c: ApplianceConfiguration) throws(DeviceError) -> DeviceSet {
        var descriptions: [String] = []
        var simulated: [String] = []
        var outputs: [String: any DigitalOutput] = [:]
        var variables: [String: String] = [:]
        var button: (any DigitalInput)?

        let gpioNames = c.outputs.keys.sorted() + (c.button == nil ? [] : ["button"])
        if !gpioNames.isEmpty {
            let chip: any GPIOChip
            let simulate = c.simulate == .always || (c.simulate == .auto && GPIOChips.list().isEmpty && !(c.chip.map(chipExists) ?? false))
            if simulate {
                let simulatedChip = SimulatedGPIOChip(name: "simulated", lines: simulatedLineNames(c))
                // The button rests released, as its pull resistor would hold it.
                if let b = c.button { try? simulatedChip.setInput(b.line, physical: b.activeLow) }
                chip = simulatedChip
                simulated += gpioNames
            } else if let configured = c.chip {
                do { chip = try GPIODChip(configured) } catch { throw DeviceError("gpio.chip: \(error.message)") }
            } else {
                // Not configured: the header's chip by its label, and the first line of output says which.
                do {
                    let choice = try GPIOChips.headerChip(among: GPIOChips.list())
                    chip = try GPIODChip(choice.chip.path)
                    descriptions.append(choice.description)
                } catch {
                    throw DeviceError("gpio.chip: \(error.message)")
                }
            }
            for name in c.outputs.keys.sorted() {
                guard let o = c.outputs[name] else { continue }
                let request = GPIOLineRequest(name: name, line: o.line, activeLow: o.activeLow, initial: o.initial)
                do { outputs[name] = try chip.output(request) } catch { throw DeviceError("gpio.outputs.\(name): \(error.message)") }
                variables[name] = o.contextVariable
                descriptions.append("\(name): \(chip.name) \(o.line)\(o.activeLow ? " (active low)" : "")")
            }
            if let b = c.button {
                let request = GPIOLineRequest(name: "button", line: b.line, activeLow: b.activeLow, debounce: b.debounce)
                do { button = try chip.input(request) } catch { throw DeviceError("gpio.button: \(error.message)") }
                descriptions.append("button: \(chip.name) \(b.line)\(b.activeLow ? " (active low)" : ""), \(b.mode.rawValue) to talk")
            }
        }

        let camera: any Camera
        let noVideo = !FileManager.default.fileExists(atPath: c.cameraDevice) && V4L2Devices.list().isEmpty
        if c.simulate == .always || (c.simulate == .auto && noVideo) {
            do { camera = try SimulatedCamera(width: c.cameraWidth, height: c.cameraHeight, quality: c.jpegQuality) } catch { throw DeviceError("camera: \(error.message)") }
            simulated.append(DeviceSet.cameraName)
            descriptions.append("camera: simulated \(c.cameraWidth)×\(c.cameraHeight) test pattern")
        } else {
            do {
                camera = try V4L2Camera(device: c.cameraDevice, width: c.cameraWidth, height: c.cameraHeight, quality: c.jpegQuality)
            } catch {
                throw DeviceError("camera.device: \(error.message)")
            }
            descriptions.append("camera: \(c.cameraDevice) \(c.cameraWidth)×\(c.cameraHeight)")
        }
        return DeviceSet(
            outputs: outputs, contextVariables: variables, button: button, camera: camera,
            descriptions: descriptions, simulated: simulated)
    }

    private static func chipExists(_ chip: String) -> Bool {
        let path = chip.hasPrefix("/") ? chip : "/dev/" + (chip.allSatisfy(\.isNumber) ? "gpiochip\(chip)" : chip)
        return FileManager.default.fileExists(atPath: path)
    }

    /// Line names for a simulated chip wide enough for every configured offset, named lines included.
    private static func simulatedLineNames(_ c: ApplianceConfiguration) -> [String] {
        var selectors = c.outputs.values.map(\.line)
        if let b = c.button { selectors.append(b.line) }
        var highest = 7
        var named: [String] = []
        for s in selectors {
            switch s {
            case .offset(let o): highest = max(highest, Int(o))
            case .name(let n): named.append(n)
            }
        }
        return (0...highest).map { "line\($0)" } + named.filter { !$0.hasPrefix("line") || Int($0.dropFirst(4)) == nil }
    }
}
