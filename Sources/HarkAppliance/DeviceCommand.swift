import Foundation
import HarkCore

extension DeviceSet {
    /// The camera's device name, as dialog actions, the device list, the API's path and the configuration
    /// spell it; no GPIO output may take it.
    public static let cameraName = "camera"
}

/// What a GPIO output can be told to do (`docs/device-actions.md`).
public enum OutputCommand: String, Sendable, CaseIterable {
    case on, off, toggle, blink
}

/// What a device command produced: an output's state as read back after the command, or the picture the
/// camera took, as the picture store keeps it.
public enum DeviceCommandResult: Sendable, Equatable {
    /// The output's state read back from the line: `true` is on.
    case state(Bool)
    case picture(StoredPicture)

    /// The value the dialog's `result_variable` receives: `"on"`/`"off"`, or the saved picture's path.
    public var dialogValue: JSONValue {
        switch self {
        case .state(let on): .string(on ? "on" : "off")
        case .picture(let stored): .string(stored.url.path)
        }
    }
}

/// Why a device command did not run. The API answers 404, 400 and 503 for these; the dialog logs the message.
public enum DeviceCommandError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No device by that name is configured (or no camera is).
    case noSuchDevice(String)
    /// The device exists but has no such command: the caller's mistake.
    case unknownCommand(String)
    /// The device was asked correctly and failed (the line, the camera or the picture store).
    case deviceFailed(String)

    public var message: String {
        switch self {
        case .noSuchDevice(let m), .unknownCommand(let m), .deviceFailed(let m): m
        }
    }

    public var description: String { message }
}
