import Dispatch
import Foundation
import HarkAppliance
import HarkCore
import HarkDevices
import HarkHTTP
import HarkHTTPTestSupport
import Synchronization
import Testing
@testable import HarkServer

/// Watson `/message` turns over real sockets run at the same time: each carries its own context, so one
/// client's turn does not wait for another's (issue 14). Deterministic: the turns are held at a gate inside
/// the dialog (the report of their device action) until the test has seen every one of them there.
@Suite("Concurrent /message turns")
struct ConcurrentTurnsTests {
    /// Where the turns wait: each arrival is counted and signalled, and all wait until the test opens the gate.
    final class Gate: Sendable {
        let arrivals = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let held = Mutex(0)

        func arrive() {
            held.withLock { $0 += 1 }
            arrivals.signal()
            // Bounded only so a regression fails the test instead of hanging it.
            _ = release.wait(timeout: .now() + .seconds(15))
        }

        func open(_ count: Int) {
            for _ in 0..<count { release.signal() }
        }
    }

    @Test("four /message turns are inside the dialog at once, and the server still answers others meanwhile")
    func turnsOverlap() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hark-conc-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try EventStore(path: directory.appendingPathComponent("events.sqlite3"))
        let auth = try AuthService(directory: directory.appendingPathComponent("auth"), tokenLifetime: .seconds(3600))
        let chip = SimulatedGPIOChip(name: "simulated", lines: ["LIGHT"])
        let devices = DeviceSet(outputs: ["light": try chip.output(GPIOLineRequest(name: "light", line: .name("LIGHT")))],
                                button: nil, camera: nil, simulated: ["light"])
        let gate = Gate()
        // The action event is reported from inside the dialog turn (its performer), after the light switched.
        let recorder = EventRecorder(store: store) { event, _ in
            if event.kind == .action { gate.arrive() }
        }
        let workspace = try Workspace.load(from: CompanionAPITests.root.appendingPathComponent("Intents/home.json"))
        let turns = TurnRunner(assistant: try Assistant(workspace: workspace), devices: devices, recorder: recorder,
                               pictures: nil, acousticThreshold: 0.5, intentThreshold: 0.2, seed: 5)
        let api = CompanionAPI(turns: turns, auth: auth, pictures: nil, listening: nil, speak: nil, openAPI: Array("{}".utf8),
                               concurrentTurns: 4)
        let router = api.router(staticFiles: nil)
        let code = try auth.issuePairingCode(lifetime: .seconds(60))
        let paired = router.respond(to: HTTPRequest(method: "POST", path: "/api/pair", headers: ["content-type": "application/json"],
                                                    body: Array(#"{"code": "\#(code)"}"#.utf8), remoteAddress: "127.0.0.1"))
        let token = try #require(try JSONValue.parse(Data(paired.body))["token"]?.stringValue)
        // The welcome turn's context, which every client then carries (as the benchmark's do).
        let welcome = router.respond(to: HTTPRequest(method: "POST", path: "/v1/workspaces/default/message", query: ["version": "2021-06-14"],
                                                     headers: ["authorization": "Bearer \(token)"], remoteAddress: "127.0.0.1"))
        let context = try #require(try JSONValue.parse(Data(welcome.body))["context"])

        try withServer(router) { server in
            let count = 4
            let clients = try (0..<count).map { _ in try HTTPTestClient(port: server.port, timeout: 20) }
            let body = Array(#"{"input": {"text": "turn on the light"}, "context": \#(context.serialized())}"#.utf8)
            for client in clients {
                try client.send(method: "POST", path: "/v1/workspaces/default/message?version=2021-06-14",
                                headers: ["Authorization": "Bearer \(token)", "Content-Type": "application/json"], body: body)
            }
            // Every turn reaches the gate while none has finished: they are in the dialog at the same time.
            // (One at a time, the second would never arrive while the first waits: this would time out.)
            var arrived = 0
            for _ in 0..<count where gate.arrivals.wait(timeout: .now() + .seconds(10)) == .success { arrived += 1 }
            #expect(arrived == count)
            #expect(gate.held.withLock { $0 } == count)
            // With every turn held, the network thread still serves another client.
            let other = try HTTPTestClient(port: server.port)
            #expect(try other.request("GET", "/api/openapi.json").status == 200)
            gate.open(count)
            for client in clients {
                let response = try client.readResponse()
                #expect(response.status == 200, "\(response.text)")
                #expect(response.json?["intents"]?[0]?["intent"]?.stringValue == "OnLight")
                #expect(response.json?["output"]?["text"]?[0]?.stringValue == "Light is on")
            }
        }
        #expect(try devices.outputs["light"]?.read() == true)
    }

    @Test("past its width the turn gate admits turns in the order they arrived")
    func gateIsFirstComeFirstServed() throws {
        let gate = TurnGate(width: 1)
        let order = Mutex<[String]>([])
        let entered = DispatchSemaphore(value: 0)
        let hold = DispatchSemaphore(value: 0)
        let done = DispatchGroup()
        func start(_ name: String, holding: Bool) {
            DispatchQueue(label: "turn.\(name)").async(group: done) {
                gate.run {
                    order.withLock { $0.append(name) }
                    if holding {
                        entered.signal()
                        _ = hold.wait(timeout: .now() + .seconds(10))
                    }
                }
            }
        }
        func waitUntilQueued(_ n: Int) {
            let deadline = Date().addingTimeInterval(10)
            while gate.queued < n && Date() < deadline { usleep(1_000) }
        }
        start("A", holding: true)
        #expect(entered.wait(timeout: .now() + .seconds(10)) == .success)
        start("B", holding: false)
        waitUntilQueued(1)
        start("C", holding: false)
        waitUntilQueued(2)
        #expect(gate.queued == 2)
        #expect(order.withLock { $0 } == ["A"])
        hold.signal()
        #expect(done.wait(timeout: .now() + .seconds(10)) == .success)
        #expect(order.withLock { $0 } == ["A", "B", "C"])
    }

    @Test("a turn waiting for a device gives its place to the next and queues again after")
    func aDeviceWaitLeavesThePlace() throws {
        let gate = TurnGate(width: 1)
        let order = Mutex<[String]>([])
        let waiting = DispatchSemaphore(value: 0)
        let frame = DispatchSemaphore(value: 0)
        let done = DispatchGroup()
        DispatchQueue(label: "turn.A").async(group: done) {
            gate.run {
                order.withLock { $0.append("A starts") }
                DeviceWait.outside {
                    waiting.signal()
                    _ = frame.wait(timeout: .now() + .seconds(10))
                }
                order.withLock { $0.append("A ends") }
            }
        }
        #expect(waiting.wait(timeout: .now() + .seconds(10)) == .success)
        // A waits for its frame outside the gate: B, with the only place, runs to its end meanwhile.
        let b = DispatchGroup()
        DispatchQueue(label: "turn.B").async(group: b) {
            gate.run { order.withLock { $0.append("B") } }
        }
        #expect(b.wait(timeout: .now() + .seconds(10)) == .success)
        frame.signal()
        #expect(done.wait(timeout: .now() + .seconds(10)) == .success)
        #expect(order.withLock { $0 } == ["A starts", "B", "A ends"])
        // Outside any gate the wait just runs.
        #expect(DeviceWait.outside { 42 } == 42)
        #expect(gate.queued == 0)
    }
}
