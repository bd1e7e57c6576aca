import Foundation
import HarkAppliance
import HarkCore
import HarkDevices
import HarkHTTP
import Testing
@testable import HarkServer

/// The API's handlers through its router (no sockets): auth, Watson's /message with context carried across
/// turns, devices, pictures, events, and the errors' shapes and statuses.
@Suite("Companion API")
struct CompanionAPITests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    final class Bench: @unchecked Sendable {
        // @unchecked: set up once, then only read.
        let directory: URL
        let chip = SimulatedGPIOChip(name: "simulated", lines: ["LIGHT", "LED"])
        let store: EventStore
        let pictures: PictureStore
        let auth: AuthService
        let router: Router
        let turns: TurnRunner

        init(now: @escaping @Sendable () -> Date = { Date() }, tokenCheckInterval: Duration = .seconds(5),
             listening: WebListening? = nil, listenLimits: ListenLimits = ListenLimits(),
             audit: @escaping @Sendable (AuthAudit) -> Void = { _ in }) throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("hark-api-\(UUID().uuidString)")
            store = try EventStore(path: directory.appendingPathComponent("events.sqlite3"))
            pictures = try PictureStore(directory: directory.appendingPathComponent("pictures"), limit: 10, events: store)
            auth = try AuthService(directory: directory.appendingPathComponent("auth"), tokenLifetime: .seconds(3600), now: now, audit: audit)
            let devices = DeviceSet(
                outputs: [
                    "light": try chip.output(GPIOLineRequest(name: "light", line: .name("LIGHT"))),
                    "led": try chip.output(GPIOLineRequest(name: "led", line: .name("LED"))),
                ],
                button: nil, camera: try SimulatedCamera(width: 160, height: 120), simulated: ["light", "led", "camera"])
            let workspace = try Workspace.load(from: CompanionAPITests.root.appendingPathComponent("Intents/home.json"))
            turns = TurnRunner(
                assistant: try Assistant(workspace: workspace), devices: devices, recorder: EventRecorder(store: store) { _, _ in },
                pictures: pictures, acousticThreshold: 0.5, intentThreshold: 0.2, seed: 3)
            let api = CompanionAPI(turns: turns, auth: auth, pictures: pictures, listening: listening, speak: nil, openAPI: Array("{}".utf8),
                                   hosts: HostPolicy(names: ["localhost", "127.0.0.1", "::1", "hark.example"]),
                                   tokenCheckInterval: tokenCheckInterval, listenLimits: listenLimits)
            router = api.router(staticFiles: nil)
        }

        deinit { try? FileManager.default.removeItem(at: directory) }

        func request(_ method: String, _ path: String, query: [String: String] = [:], json: String? = nil, token: String? = nil,
                     headers extra: [String: String] = [:]) -> HTTPResponse {
            var headers: [String: String] = [:]
            if let token { headers["authorization"] = "Bearer \(token)" }
            if json != nil { headers["content-type"] = "application/json" }
            headers.merge(extra.map { ($0.key.lowercased(), $0.value) }) { _, new in new }
            return router.respond(to: HTTPRequest(
                method: method, path: path, query: query, headers: headers, body: Array((json ?? "").utf8), remoteAddress: "10.0.0.7"))
        }

        func token() throws -> String {
            let code = try auth.issuePairingCode(lifetime: .seconds(60))
            let r = request("POST", "/api/pair", json: #"{"code": "\#(code)"}"#)
            try #require(r.status == 200, "\(String(decoding: r.body, as: UTF8.self))")
            return try #require(Self.json(r)["token"]?.stringValue)
        }

        static func json(_ r: HTTPResponse) throws -> JSONValue { try JSONValue.parse(Data(r.body)) }
    }

    static func errorCode(_ r: HTTPResponse) -> String? {
        (try? Bench.json(r))?["error"]?["code"]?.stringValue
    }

    @Test("everything but pairing, login and the API description needs a valid token")
    func unauthorized() throws {
        let bench = try Bench()
        for (method, path) in [("GET", "/api/devices"), ("GET", "/api/pictures"), ("POST", "/v1/workspaces/default/message"), ("GET", "/api/events")] {
            let r = bench.request(method, path, query: ["version": "2021-06-14"], json: "{}")
            #expect(r.status == 401, "\(method) \(path)")
            #expect(Self.errorCode(r) == "unauthorized")
        }
        #expect(bench.request("GET", "/api/devices", token: "not.a.token").status == 401)
        let good = try bench.token()
        let tampered = String(good.dropLast(2)) + (good.hasSuffix("AA") ? "BB" : "AA")
        #expect(bench.request("GET", "/api/devices", token: tampered).status == 401)
        #expect(bench.request("GET", "/api/devices", token: good).status == 200)
        // A token in the URL counts only on WebSocket upgrades (below), never on a plain request.
        let inURL = bench.request("GET", "/api/devices", query: ["access_token": good])
        #expect(inURL.status == 401)
        #expect(String(decoding: inURL.body, as: UTF8.self).contains("only on WebSocket upgrades"))
        #expect(bench.request("GET", "/api/openapi.json").status == 200)
    }

    @Test("a wrong pairing code is 401, and guessing is rate-limited (429 with Retry-After)")
    func pairingGuesses() throws {
        let bench = try Bench()
        var statuses: [Int] = []
        for _ in 0..<8 { statuses.append(bench.request("POST", "/api/pair", json: #"{"code": "000000"}"#).status) }
        #expect(statuses.first == 401)
        #expect(statuses.contains(429))
        let limited = bench.request("POST", "/api/pair", json: #"{"code": "000000"}"#)
        #expect(limited.status == 429 && limited.headers["retry-after"] != nil)
    }

    @Test("Watson's /message: the welcome, then turns that carry the context; the light really switches")
    func watsonMessage() throws {
        let bench = try Bench()
        let token = try bench.token()
        let path = "/v1/workspaces/default/message"
        let v = ["version": "2021-06-14"]
        let welcome = try Bench.json(bench.request("POST", path, query: v, json: "{}", token: token))
        #expect(welcome["output"]?["text"]?[0]?.stringValue?.hasPrefix("Hello") == true)
        var context = try #require(welcome["context"])
        let on = try Bench.json(bench.request("POST", path, query: v, json: JSONValue.object(["input": ["text": "turn on the light"], "context": context]).serialized(), token: token))
        #expect(on["intents"]?[0]?["intent"] == "OnLight")
        #expect(on["output"]?["text"]?[0] == "Light is on")
        #expect(on["output"]?["actions"]?[0]?["name"] == "light")
        #expect(bench.chip.value(of: .name("LIGHT")) == true)
        context = try #require(on["context"])
        #expect(context["system"]?["dialog_turn_counter"] == 2)
        let status = try Bench.json(bench.request("POST", path, query: v, json: JSONValue.object(["input": ["text": "is the light on?"], "context": context]).serialized(), token: token))
        #expect(status["output"]?["text"]?[0] == "The light is on.")
        #expect(status["context"]?["conversation_id"] == context["conversation_id"])
        // The turns are in the event log as web turns.
        let turns = try bench.store.turns()
        #expect(turns.count == 2 && turns.allSatisfy { $0.source == .web })
    }

    @Test("bad requests: malformed JSON, wrong shapes, no version, unknown workspace", arguments: [
        ("/v1/workspaces/default/message", ["version": "1"], "{oops", 400),
        ("/v1/workspaces/default/message", ["version": "1"], #"{"input": "turn on"}"#, 400),
        ("/v1/workspaces/default/message", ["version": "1"], #"{"input": {"text": 5}}"#, 400),
        ("/v1/workspaces/default/message", ["version": "1"], #"{"context": []}"#, 400),
        ("/v1/workspaces/default/message", [:], #"{"input": {"text": "hi"}}"#, 400),
        ("/v1/workspaces/nope/message", ["version": "1"], #"{"input": {"text": "hi"}}"#, 404),
        ("/api/devices/lamp", [:], #"{"command": "on"}"#, 404),
        ("/api/devices/light", [:], #"{"command": "explode"}"#, 400),
        ("/api/devices/light", [:], #"{}"#, 400),
        ("/api/say", [:], #"{"text": "hello"}"#, 503),
    ])
    func badRequests(path: String, query: [String: String], body: String, status: Int) throws {
        let bench = try Bench()
        let r = bench.request("POST", path, query: query, json: body, token: try bench.token())
        #expect(r.status == status, "\(String(decoding: r.body, as: UTF8.self))")
        #expect(Self.errorCode(r) != nil)
        #expect((try? Bench.json(r))?["error"]?["message"]?.stringValue?.isEmpty == false)
    }

    @Test("devices: list, switch, and a picture taken from the API is listed and served as JPEG")
    func devicesAndPictures() throws {
        let bench = try Bench()
        let token = try bench.token()
        let on = try Bench.json(bench.request("POST", "/api/devices/light", json: #"{"command": "on"}"#, token: token))
        #expect(on["state"] == "on" && bench.chip.value(of: .name("LIGHT")) == true)
        let list = try Bench.json(bench.request("GET", "/api/devices", token: token))
        #expect(list["devices"]?.arrayValue?.contains { $0["name"] == "light" && $0["state"] == "on" } == true)
        let picture = try Bench.json(bench.request("POST", "/api/devices/camera", json: #"{"command": "capture"}"#, token: token))
        let url = try #require(picture["url"]?.stringValue)
        let listed = try Bench.json(bench.request("GET", "/api/pictures", token: token))
        #expect(listed["pictures"]?[0]?["url"]?.stringValue == url)
        let jpeg = bench.request("GET", url, token: token)
        #expect(jpeg.status == 200 && jpeg.headers["content-type"] == "image/jpeg")
        #expect(Array(jpeg.body.prefix(2)) == [0xFF, 0xD8])
        #expect(bench.request("GET", "/api/pictures/999", token: token).status == 404)
        // "take a picture" through the Watson API stores one too.
        let welcome = try Bench.json(bench.request("POST", "/v1/workspaces/default/message", query: ["version": "1"], json: "{}", token: token))
        let context = try #require(welcome["context"])
        _ = bench.request("POST", "/v1/workspaces/default/message", query: ["version": "1"],
                          json: JSONValue.object(["input": ["text": "take a picture"], "context": context]).serialized(), token: token)
        #expect(try bench.pictures.list().count == 2)
    }

    @Test("events: the log after an id, as the event socket replays it")
    func events() throws {
        let bench = try Bench()
        let token = try bench.token()
        _ = bench.request("POST", "/api/devices/light", json: #"{"command": "on"}"#, token: token)
        let all = try Bench.json(bench.request("GET", "/api/events", token: token))["events"]?.arrayValue ?? []
        #expect(all.contains { $0["kind"] == "device" && $0["text"] == "Light is on" })
        let firstID = try #require(all.first?["id"]?.doubleValue)
        let after = try Bench.json(bench.request("GET", "/api/events", query: ["since": String(Int(firstID))], token: token))["events"]?.arrayValue ?? []
        #expect(after.count == all.count - 1)
        #expect(bench.request("GET", "/api/events", query: ["since": "yesterday"], token: token).status == 400)
    }
}
