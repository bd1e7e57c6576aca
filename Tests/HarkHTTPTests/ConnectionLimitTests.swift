import Foundation
import HarkHTTPTestSupport
import Synchronization
import Testing
@testable import HarkHTTP

/// Clients that hoard connections — idle, trickling their heads, or holding WebSockets — from one address
/// or many, and the page that must still load; silent WebSockets; a handler that cannot keep up. Attackers
/// connect from 127.0.0.2 and up (all of 127/8 is loopback), the page from 127.0.0.1.
@Suite("Connection limits", .serialized)
struct ConnectionLimitTests {
    /// True once the server has closed `client`'s connection (EOF or reset), reading and discarding whatever
    /// else arrives; false if it is still open after `seconds`.
    static func closedByServer(_ client: HTTPTestClient, within seconds: TimeInterval) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            do {
                if try client.stream.read(max: 65536).isEmpty { return true }
            } catch let error as TestClientError where error.description == "receive timed out" {
                continue
            } catch {
                return true
            }
        }
        return false
    }

    /// A connection that has sent half a request head and nothing more.
    static func halfHead(port: Int, from source: String) throws -> HTTPTestClient {
        let client = try HTTPTestClient(port: port, timeout: 0.5, source: source)
        try client.send("GET /hello HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        return client
    }

    @Test func idleConnectionsFromOneAddressMakeWayForThePage() throws {
        var configuration = ServerConfiguration(port: 0)
        configuration.maxConnections = 16
        configuration.reservedConnections = 2
        configuration.maxConnectionsPerAddress = 4
        configuration.requestTimeoutSeconds = 30
        try withServer(sampleRouter(), configuration: configuration) { server in
            let hoard = try (0..<20).map { _ in try Self.halfHead(port: server.port, from: "127.0.0.2") }
            // The page, from another address, is answered at once (not 503, not after a timeout).
            let page = try HTTPTestClient(port: server.port, timeout: 5)
            #expect(try page.request("GET", "/hello").status == 200)
            // All but the newest few of the hoard were pushed out.
            let closed = hoard.filter { Self.closedByServer($0, within: 2) }.count
            #expect(closed >= 20 - configuration.maxConnectionsPerAddress)
            // The same address can still load the page: its own idle connections make way.
            #expect(try HTTPTestClient(port: server.port, source: "127.0.0.2").request("GET", "/hello").status == 200)
        }
    }

    @Test func idleConnectionsFromManyAddressesMakeWayForThePage() throws {
        var configuration = ServerConfiguration(port: 0)
        configuration.maxConnections = 16
        configuration.reservedConnections = 2
        configuration.requestTimeoutSeconds = 30
        try withServer(sampleRouter(), configuration: configuration) { server in
            let hoard = try (0..<24).map { i in try Self.halfHead(port: server.port, from: "127.0.1.\(i + 1)") }
            let page = try HTTPTestClient(port: server.port, timeout: 5)
            #expect(try page.request("GET", "/hello").status == 200)
            #expect(hoard.filter { Self.closedByServer($0, within: 2) }.count >= 24 - configuration.maxConnections)
        }
    }

    @Test func webSocketsLeaveConnectionsForThePage() throws {
        var configuration = ServerConfiguration(port: 0)
        configuration.maxConnections = 8
        configuration.reservedConnections = 2
        configuration.maxConnectionsPerAddress = 100
        configuration.maxWebSocketsPerAddress = 100
        try withServer(webSocketRouter { EchoHandler() }, configuration: configuration) { server in
            var open: [WebSocketTestClient] = []
            var refusal: WebSocketRefused?
            for _ in 0..<8 {
                do { open.append(try WebSocketTestClient(port: server.port, path: "/ws/echo")) } catch let refused as WebSocketRefused {
                    refusal = refused
                    break
                }
            }
            #expect(open.count == 6)
            #expect(refusal?.response.status == 503)
            #expect(refusal?.response.text.contains("kept for the page") == true)
            #expect(try HTTPTestClient(port: server.port).request("GET", "/plain").status == 200)
            // Closing one makes room for another.
            try open[0].sendClose()
            _ = try open[0].receive()
            var reopened: WebSocketTestClient?
            for _ in 0..<50 where reopened == nil {
                reopened = try? WebSocketTestClient(port: server.port, path: "/ws/echo")
                if reopened == nil { Thread.sleep(forTimeInterval: 0.1) }
            }
            #expect(reopened != nil)
        }
    }

    @Test func oneAddressGetsItsShareOfWebSockets() throws {
        var configuration = ServerConfiguration(port: 0)
        configuration.maxWebSocketsPerAddress = 3
        try withServer(webSocketRouter { EchoHandler() }, configuration: configuration) { server in
            let mine = try (0..<3).map { _ in try WebSocketTestClient(port: server.port, path: "/ws/echo", source: "127.0.0.2") }
            #expect(mine.count == 3)
            #expect(throws: WebSocketRefused.self) { _ = try WebSocketTestClient(port: server.port, path: "/ws/echo", source: "127.0.0.2") }
            let other = try WebSocketTestClient(port: server.port, path: "/ws/echo", source: "127.0.0.3")
            try other.send(text: "still here")
            #expect(try other.receive() == .text("still here"))
        }
    }

    /// A client that vanished (a phone off the Wi-Fi: it answers nothing) is dropped within about 10 s with the
    /// default configuration, so a room stops mixing it and shows it gone.
    @Test func theDefaultsDropAVanishedClientWithinTenSeconds() throws {
        let configuration = ServerConfiguration(port: 0)
        try configuration.validate()
        let handler = EchoHandler()
        try withServer(webSocketRouter { handler }, configuration: configuration) { server in
            let silent = try WebSocketTestClient(port: server.port, path: "/ws/echo", timeout: 0.5)
            let opened = Date()
            #expect(Self.closedByServer(silent.http, within: 30))
            let after = Date().timeIntervalSince(opened)
            // libwebsockets checks its timers about once a second: allow it two.
            #expect(after <= 12, "dropped after \(after) s")
        }
    }

    @Test func aSilentWebSocketIsPingedThenClosed() throws {
        var configuration = ServerConfiguration(port: 0)
        configuration.webSocketPingSeconds = 1
        configuration.webSocketHangupSeconds = 4
        let handler = EchoHandler()
        try withServer(webSocketRouter { handler }, configuration: configuration) { server in
            // Never reads, so never answers the pings.
            let silent = try WebSocketTestClient(port: server.port, path: "/ws/echo", timeout: 0.5)
            #expect(Self.closedByServer(silent.http, within: 20))
            #expect(handler.closedSignal.wait(timeout: .now() + 10) == .success)
            // One that talks (and answers pings: WebSocketTestClient.receive does) outlives the hangup time.
            let lively = try WebSocketTestClient(port: server.port, path: "/ws/echo", timeout: 5)
            for i in 0..<12 {
                Thread.sleep(forTimeInterval: 0.5)
                try lively.send(text: "tick \(i)")
                #expect(try lively.receive() == .text("tick \(i)"))
            }
        }
    }

    @Test func aHandlerThatCannotKeepUpStopsTheReading() throws {
        let handler = Stalled()
        try withServer(webSocketRouter { handler }) { server in
            let client = try WebSocketTestClient(port: server.port, path: "/ws/stall", timeout: 2)
            let message = [UInt8](repeating: 7, count: 64 * 1024)
            try client.send(binary: message)
            #expect(handler.firstArrived.wait(timeout: .now() + 10) == .success)
            // 64 MiB while the handler is stuck: the kernel's buffers take a few MiB, then the writes stall
            // (SO_SNDTIMEO) because the server has stopped reading, rather than queueing it all in memory.
            var sent = 1
            var stalled = false
            while sent < 1024 {
                do { try client.send(binary: message) } catch { stalled = true; break }
                sent += 1
            }
            #expect(stalled)
            handler.gate.signal()
        }
    }
}

/// Takes the first message and then stops until `gate` is signalled.
private final class Stalled: WebSocketHandler {
    let gate = DispatchSemaphore(value: 0)
    let messages = Mutex(0)
    let firstArrived = DispatchSemaphore(value: 0)
    func opened(_ connection: WebSocketConnection) {}
    func received(binary: [UInt8]) {
        let count = messages.withLock { n -> Int in
            n += 1
            return n
        }
        if count == 1 {
            firstArrived.signal()
            gate.wait()
        }
    }
}
