import Foundation
import HarkCore
import HarkDevices
import HarkSpeech

/// Runs dialog client actions on the appliance's devices (docs/device-actions.md): `light`/`led` on, off,
/// toggle, blink; `camera` capture. The value handed back to the dialog is the device's state read back
/// after the command, or the saved picture's path; each command also becomes an event. Failures are typed
/// (`DeviceCommandError`): an unknown device, an unknown command, or a device that failed.
public final class ActionDispatcher: DialogActionPerformer {
    public let devices: DeviceSet
    let pictures: PictureStore?
    let report: (ApplianceEvent) -> Void
    let announce: (ApplianceEvent) -> Void
    let turn: Int64?
    /// What triggered a picture (`voice`, `console`, `web`), stored with it.
    let trigger: String
    /// The appliance's room membership, for the `room` action; nil: rooms are not available.
    let rooms: RoomLink?
    /// The turn's transcript when it was spoken (an announcement plays its recording).
    let spoken: Transcript?

    /// - Parameters:
    ///   - report: receives the `action`, `device` and `error` events as they happen, to be stored and shown.
    ///   - announce: receives the `picture` event, which the picture store has already stored, to be shown.
    public init(
        devices: DeviceSet, pictures: PictureStore?, turn: Int64?, trigger: String, rooms: RoomLink? = nil, spoken: Transcript? = nil,
        report: @escaping (ApplianceEvent) -> Void, announce: @escaping (ApplianceEvent) -> Void
    ) {
        self.rooms = rooms
        self.spoken = spoken
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
        if action.name == RoomLink.actionName, let rooms {
            do { return try room(rooms, command: command, parameters: action.parameters).json } catch { throw DialogActionFailure(error.message) }
        }
        do { return try run(device: action.name, command: command).dialogValue } catch { throw DialogActionFailure(error.message) }
    }

    /// Joins or leaves a room for the dialog, reported as an `action` event (an `error` event for a bad command).
    /// A room that is not there is an outcome the dialog answers ("There is no room called …"), not an error.
    public func room(_ rooms: RoomLink, command: String, parameters: JSONObject) throws(DeviceCommandError) -> RoomOutcome {
        let outcome: RoomOutcome
        do { outcome = try rooms.perform(command: command, parameters: parameters, spoken: spoken) } catch {
            report(event(.error, "room \(command): \(error.message)", ["name": .string(RoomLink.actionName), "command": .string(command)]))
            throw error
        }
        report(event(.action, "room \(command): \(outcome.message)", [
            "name": .string(RoomLink.actionName), "command": .string(command), "result": outcome.json,
        ]))
        return outcome
    }

    /// Runs `command` on the device named `name` and reports it as events: `action` (and `device` for an
    /// output's state) when it ran, `error` when it did not. The API calls this directly and answers by the
    /// error's case; the dialog goes through `perform`.
    public func run(device name: String, command: String) throws(DeviceCommandError) -> DeviceCommandResult {
        let result: DeviceCommandResult
        do throws(DeviceCommandError) {
            // One command at a time on the devices, whichever turn or request sends it (web turns run
            // concurrently); its events are logged after, outside the lock (the camera's: see `capture`).
            if name == DeviceSet.cameraName {
                result = try capture(command: command)
            } else if let output = devices.outputs[name] {
                result = try devices.commandsInOrder { () throws(DeviceCommandError) -> DeviceCommandResult in
                    try switchOutput(output, command: command)
                }
            } else {
                throw .noSuchDevice("no device named \"\(name)\" (configured: \(devices.names.joined(separator: ", ")))")
            }
        } catch {
            report(event(.error, "\(name) \(command): \(error.message)", ["name": .string(name), "command": .string(command)]))
            throw error
        }
        report(event(.action, "\(name) \(command)", [
            "name": .string(name), "command": .string(command), "result": result.dialogValue,
        ]))
        if case .state(let on) = result {
            // The line's state as read back, in the words the original phone app showed.
            let state = on ? "on" : "off"
            report(event(.device, "\(name.prefix(1).uppercased() + name.dropFirst()) is \(state)", [
                "name": .string(name), "state": .string(state),
            ]))
        }
        return result
    }

    private func switchOutput(_ output: any DigitalOutput, command: String) throws(DeviceCommandError) -> DeviceCommandResult {
        guard let command = OutputCommand(rawValue: command) else {
            throw .unknownCommand("unknown command \"\(command)\" for \(output.name) (use on, off, toggle or blink)")
        }
        do throws(GPIOError) {
            switch command {
            case .on: try output.set(true)
            case .off: try output.set(false)
            case .toggle: try output.set(!(try output.read()))
            case .blink:
                let before = try output.read()
                try output.set(!before)
                Thread.sleep(forTimeInterval: Self.blinkDuration.timeInterval)
                try output.set(before)
            }
            return .state(try output.read())
        } catch {
            throw .deviceFailed(error.message)
        }
    }

    private func capture(command: String) throws(DeviceCommandError) -> DeviceCommandResult {
        guard command == "capture" || command.isEmpty else {
            throw .unknownCommand("unknown command \"\(command)\" for camera (use capture)")
        }
        guard let camera = devices.camera else { throw .noSuchDevice("no camera is configured") }
        // Requests at the same time share one capture (`CaptureRounds`); the camera's wait for a frame gives up the
        // turn's place (`DeviceWait`), and storing the picture (and its event) is the round leader's.
        let share = try devices.captureRounds.take { () throws(DeviceCommandError) -> StoredPicture in
            let picture: Picture
            do throws(CameraError) {
                picture = try DeviceWait.outside { () throws(CameraError) -> Picture in try camera.capture() }
            } catch {
                throw .deviceFailed(error.message)
            }
            guard let pictures else {
                throw .deviceFailed("the picture was taken but there is no picture store to keep it")
            }
            do { return try pictures.save(picture, trigger: trigger, turn: turn) } catch {
                throw .deviceFailed("saving the picture: \(error)")
            }
        }
        let stored = share.picture
        let event = PictureStore.event(for: stored, trigger: trigger, turn: turn, shared: share.isShared)
        if share.isShared {
            // The leader's save stored its own event; this turn's says which picture it got.
            do { try pictures?.events.append(event) } catch { throw .deviceFailed("logging the shared picture: \(error)") }
        }
        announce(event)
        return .picture(stored)
    }

    private func event(_ kind: ApplianceEvent.Kind, _ text: String, _ data: JSONObject) -> ApplianceEvent {
        ApplianceEvent(kind: kind, text: text, turn: turn, data: data)
    }
}
