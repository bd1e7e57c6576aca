import Foundation
import HarkCore
import HarkDevices

/// Runs dialog client actions on the appliance's devices (docs/device-actions.md): `light`/`led` on, off,
/// toggle, blink; `camera` capture. The value handed back to the dialog is the device's state read back
/// after the command, or the saved picture's path; each command also becomes an event.
public final class ActionDispatcher: DialogActionPerformer {
    public let devices: DeviceSet
    let pictures: PictureStore?
    let report: (ApplianceEvent) -> Void
    let announce: (ApplianceEvent) -> Void
    let turn: Int64?
    /// What triggered a picture (`voice`, `console`, `web`), stored with it.
    let trigger: String

    /// - Parameters:
    ///   - report: receives the `action`, `device` and `error` events as they happen, to be stored and shown.
    ///   - announce: receives the `picture` event, which the picture store has already stored, to be shown.
    public init(
        devices: DeviceSet, pictures: PictureStore?, turn: Int64?, trigger: String,
        report: @escaping (ApplianceEvent) -> Void, announce: @escaping (ApplianceEvent) -> Void
    ) {
        self.devices = devices
        self.pictures = pictures
        self.turn = turn
        self.trigger = trigger
        self.report = report
        self.announce = announce
    }

    /// How long a `blink` keeps the LED in its other state.
    public static let blinkDuration: Duration = .milliseconds(250)

    public func perform(_ action: DialogAction) throws(DialogActionFailure) -> JSONValue {
        let command = action.parameters["command"]?.stringValue ?? ""
        let result: JSONValue
        do throws(DialogActionFailure) {
            if action.name == "camera" {
                result = try capture(command: command)
            } else if let output = devices.outputs[action.name] {
                result = try switchOutput(output, command: command)
            } else {
                throw DialogActionFailure("no device named \"\(action.name)\" (configured: \(devices.names.joined(separator: ", ")))")
            }
        } catch {
            report(event(.error, "\(action.name) \(command): \(error.message)", ["name": .string(action.name), "command": .string(command)]))
            throw error
        }
        report(event(.action, "\(action.name) \(command)", [
            "name": .string(action.name), "command": .string(command), "result": result,
        ]))
        if action.name != "camera", let state = result.stringValue {
            // The line's state as read back, in the words the original phone app showed.
            report(event(.device, "\(action.name.prefix(1).uppercased() + action.name.dropFirst()) is \(state)", [
                "name": .string(action.name), "state": .string(state),
            ]))
        }
        return result
    }

    private func switchOutput(_ output: any DigitalOutput, command: String) throws(DialogActionFailure) -> JSONValue {
        do {
            switch command {
            case "on": try output.set(true)
            case "off": try output.set(false)
            case "toggle": try output.set(!(try output.read()))
            case "blink":
                let before = try output.read()
                try output.set(!before)
                Thread.sleep(forTimeInterval: Double(Self.blinkDuration.components.attoseconds) / 1e18)
                try output.set(before)
            default:
                throw DialogActionFailure("unknown command \"\(command)\" for \(output.name) (use on, off, toggle or blink)")
            }
            return .string(try output.read() ? "on" : "off")
        } catch let error as GPIOError {
            throw DialogActionFailure(error.message)
        } catch let error as DialogActionFailure {
            throw error
        } catch {
            throw DialogActionFailure("\(error)")
        }
    }

    private func capture(command: String) throws(DialogActionFailure) -> JSONValue {
        guard command == "capture" || command.isEmpty else {
            throw DialogActionFailure("unknown command \"\(command)\" for camera (use capture)")
        }
        guard let camera = devices.camera else { throw DialogActionFailure("no camera is configured") }
        let picture: Picture
        do { picture = try camera.capture() } catch { throw DialogActionFailure(error.message) }
        guard let pictures else {
            throw DialogActionFailure("the picture was taken but there is no picture store to keep it")
        }
        do {
            let stored = try pictures.save(picture, trigger: trigger, turn: turn)
            var data = JSONObject()
            data["picture"] = .number(Double(stored.id))
            data["path"] = .string(stored.url.path)
            data["width"] = .number(Double(picture.width))
            data["height"] = .number(Double(picture.height))
            data["bytes"] = .number(Double(picture.jpeg.count))
            data["source"] = .string(picture.source)
            data["trigger"] = .string(trigger)
            announce(ApplianceEvent(kind: .picture, text: "Picture saved as \(stored.fileName)", turn: turn, data: data, time: picture.capturedAt))
            return .string(stored.url.path)
        } catch {
            throw DialogActionFailure("saving the picture: \(error)")
        }
    }

    private func event(_ kind: ApplianceEvent.Kind, _ text: String, _ data: JSONObject) -> ApplianceEvent {
        ApplianceEvent(kind: kind, text: text, turn: turn, data: data)
    }
}
