import Foundation
import HarkAppliance
import HarkCore
import HarkDevices
import HarkHTTP
import HarkHTTPTestSupport
import HarkRooms
import Synchronization
import Testing
@testable import HarkServer

/// The companion API with the rooms app, on real SQLite files in a temporary directory, for tests that talk
/// to it over real sockets. `start()` opens the rooms database again each time, as a restarted server does.
final class RoomsBench: @unchecked Sendable {
    // @unchecked: set up once, then only read (the clock and the stores are Sendable themselves).
    let directory: URL
    let store: EventStore
    let auth: AuthService
    let turns: TurnRunner
    let clock = TestClock()
    let idleClose: Duration

    init(idleClose: Duration = Rooms.defaultIdleClose) throws {
        self.idleClose = idleClose
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("hark-rooms-\(UUID().uuidString)")
        store = try EventStore(path: directory.appendingPathComponent("events.sqlite3"))
        auth = try AuthService(directory: directory.appendingPathComponent("auth"), tokenLifetime: .seconds(3600))
        let chip = SimulatedGPIOChip(name: "simulated", lines: ["LIGHT"])
        let devices = DeviceSet(outputs: ["light": try chip.output(GPIOLineRequest(name: "light", line: .name("LIGHT")))],
                                button: nil, camera: nil, simulated: ["light"])
        let workspace = try Workspace.load(from: CompanionAPITests.root.appendingPathComponent("Intents/home.json"))
        turns = TurnRunner(assistant: try Assistant(workspace: workspace), devices: devices, recorder: EventRecorder(store: store) { _, _ in },
                           pictures: nil, acousticThreshold: 0.5, intentThreshold: 0.2, seed: 3)
    }

    deinit { try? FileManager.default.removeItem(at: directory) }

    var databaseURL: URL { directory.appendingPathComponent("rooms.sqlite3") }

    /// Opens the rooms database (again) with the bench's clock.
    func openRooms() throws -> Rooms {
        let clock = clock
        return try Rooms(database: databaseURL, idleClose: idleClose, applianceName: "Kitchen", now: { clock.now })
    }

    /// Runs `body` against a started server over a freshly opened rooms database.
    func withRoomsServer<T>(_ body: (HTTPServer, Rooms) throws -> T) throws -> T {
        let rooms = try openRooms()
        let api = CompanionAPI(turns: turns, auth: auth, pictures: nil, listening: nil, speak: nil, openAPI: Array("{}".utf8), rooms: rooms)
        return try withServer(api.router(staticFiles: nil)) { server in try body(server, rooms) }
    }

    /// A paired device's token (pairing through the service, as `hark pair` and the page would).
    func deviceToken() throws -> String {
        let code = try auth.issuePairingCode(lifetime: .seconds(60))
        return try auth.pair(code: code, client: "127.0.0.1").token
    }

    /// An event in the appliance's log, which every events socket hears: a marker that proves, once it
    /// arrives, that nothing was sent to that socket before it.
    func mark(_ text: String) throws {
        try store.append(ApplianceEvent(kind: .state, text: text))
    }
}

/// One client's connection to the server, with the request shapes the rooms tests send.
final class RoomsClient {
    let http: HTTPTestClient
    var token: String

    init(port: Int, token: String) throws {
        http = try HTTPTestClient(port: port)
        self.token = token
    }

    func call(_ method: String, _ path: String, json: String? = nil, token: String?? = .none) throws -> TestResponse {
        var headers: [String: String] = [:]
        if let bearer = token ?? self.token { headers["Authorization"] = "Bearer \(bearer)" }
        if json != nil { headers["Content-Type"] = "application/json" }
        return try http.request(method, path, headers: headers, body: json.map { Array($0.utf8) } ?? (method == "GET" ? nil : []))
    }

    /// `POST /auth {"name"}` with this client's token; switches the client to the person's token.
    @discardableResult
    func pickName(_ name: String) throws -> String {
        let r = try call("POST", "/auth", json: JSONValue.object(["name": .string(name)]).serialized())
        try #require(r.status == 200, "POST /auth: \(r.status) \(r.text)")
        token = try #require(r.json?["jwt"]?.stringValue)
        return try #require(r.json?["id"]?.stringValue)
    }

    /// `POST /rooms {"display_name"}` → the new room's id.
    func create(_ displayName: String) throws -> String {
        let r = try call("POST", "/rooms", json: JSONValue.object(["display_name": .string(displayName)]).serialized())
        try #require(r.status == 201, "POST /rooms: \(r.status) \(r.text)")
        return try #require(r.json?["id"]?.stringValue)
    }
}

/// The events WebSocket of one client, read message by message.
final class EventsListener {
    let socket: WebSocketTestClient

    /// Opens the socket with `since` = the newest event now: the socket is subscribed some moments after its
    /// upgrade, and a marker stored in between then arrives as replay instead of being missed.
    init(port: Int, token: String, store: EventStore) throws {
        let since = try store.lastEventID() ?? 0
        socket = try WebSocketTestClient(port: port, path: "/api/events?since=\(since)&access_token=\(token)")
    }

    /// The next text message as JSON.
    func next() throws -> JSONValue {
        guard case .text(let text) = try socket.receive() else { throw TestClientError(description: "not a text message") }
        return try JSONValue.parse(text)
    }

    /// Reads until the appliance event with `text` arrives; returns the room events (those with a `room`)
    /// read before it. Appliance events (earlier markers) are skipped.
    func roomEvents(until text: String) throws -> [JSONValue] {
        var seen: [JSONValue] = []
        // The server's pings keep the socket's read time-out from ever firing: give up on our own.
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            let message = try next()
            if message["text"]?.stringValue == text { return seen }
            if message["room"] != nil { seen.append(message) }
        }
        throw TestClientError(description: "the marker \"\(text)\" did not arrive within 10 s")
    }
}
