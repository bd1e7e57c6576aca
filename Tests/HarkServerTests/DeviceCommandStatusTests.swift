import Foundation
import HarkAppliance
import HarkCore
import HarkDevices
import HarkHTTP
import Testing
@testable import HarkServer

/// A device command's status comes from the dispatcher's typed error, not from its message: an unknown
/// command is the caller's mistake (400), a device that fails is unavailable (503), and a picture comes back
/// as the record the store kept.
@Suite("Device command statuses")
struct DeviceCommandStatusTests {
    /// An output whose line always fails, as a chip that went away would.
    final class BrokenOutput: DigitalOutput {
        let name = "light"
        func set(_ active: Bool) throws(GPIOError) { throw GPIOError(function: "set", code: 5, message: "light: line gone") }
        func read() throws(GPIOError) -> Bool { throw GPIOError(function: "read", code: 5, message: "light: line gone") }
    }

    final class Setup {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hark-devstatus-\(UUID().uuidString)")
        let turns: TurnRunner
        let pictures: PictureStore
        let router: Router
        let token: String

        init() throws {
            let store = try EventStore(path: directory.appendingPathComponent("events.sqlite3"))
            pictures = try PictureStore(directory: directory.appendingPathComponent("pictures"), limit: 10, events: store)
            let auth = try AuthService(directory: directory.appendingPathComponent("auth"), tokenLifetime: .seconds(3600))
            let devices = DeviceSet(outputs: ["light": BrokenOutput()], button: nil, camera: try SimulatedCamera(width: 160, height: 120))
            let workspace = try Workspace.load(from: CompanionAPITests.root.appendingPathComponent("Intents/home.json"))
            turns = TurnRunner(
                assistant: try Assistant(workspace: workspace), devices: devices, recorder: EventRecorder(store: store) { _, _ in },
                pictures: pictures, acousticThreshold: 0.5, intentThreshold: 0.2, seed: 3)
            router = CompanionAPI(turns: turns, auth: auth, pictures: pictures, listening: nil, speak: nil, openAPI: Array("{}".utf8),
                                  hosts: HostPolicy(names: ["localhost"])).router(staticFiles: nil)
            let code = try auth.issuePairingCode(lifetime: .seconds(60))
            token = try auth.pair(code: code, client: "10.0.0.7").token
        }

        deinit { try? FileManager.default.removeItem(at: directory) }

        func command(_ device: String, _ command: String) -> HTTPResponse {
            router.respond(to: HTTPRequest(
                method: "POST", path: "/api/devices/\(device)", query: [:],
                headers: ["authorization": "Bearer \(token)", "content-type": "application/json"],
                body: Array(#"{"command": "\#(command)"}"#.utf8), remoteAddress: "10.0.0.7"))
        }
    }

    @Test("the dispatcher says which: unknown command, failed device, unknown device, or the stored picture")
    func typedErrors() throws {
        let setup = try Setup()
        let dispatcher = setup.turns.dispatcher(turn: nil, trigger: "web")
        #expect(throws: DeviceCommandError.unknownCommand("unknown command \"dim\" for light (use on, off, toggle or blink)")) {
            try dispatcher.run(device: "light", command: "dim")
        }
        #expect(throws: DeviceCommandError.deviceFailed("light: line gone")) { try dispatcher.run(device: "light", command: "on") }
        #expect(throws: DeviceCommandError.self) { try dispatcher.run(device: "fan", command: "on") }
        let result = try dispatcher.run(device: DeviceSet.cameraName, command: "capture")
        // Unwrapped first: Swift 6.0.3 (Debian 13) rejects a #require nested inside an #expect.
        let stored = try #require(try setup.pictures.list(limit: 1).first)
        #expect(result == .picture(stored))
    }

    @Test("through the API: an unknown command is 400, a failing device 503, a camera capture the picture")
    func statuses() throws {
        let setup = try Setup()
        let unknown = setup.command("light", "dim")
        #expect(unknown.status == 400)
        #expect(CompanionAPITests.errorCode(unknown) == "bad_request")
        let failed = setup.command("light", "on")
        #expect(failed.status == 503)
        #expect(CompanionAPITests.errorCode(failed) == "unavailable")
        #expect(setup.command("camera", "zoom").status == 400)
        let picture = setup.command("camera", "capture")
        #expect(picture.status == 200)
        let id = try JSONValue.parse(Data(picture.body))["id"]?.doubleValue
        let stored = try #require(try setup.pictures.list(limit: 1).first)
        #expect(id == Double(stored.id))
    }
}
