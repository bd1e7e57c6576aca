import Foundation
import HarkCore
import HarkHTTPTestSupport
import Synchronization
import Testing
@testable import HarkHTTP
import HarkTestSupport

/// Echoes every message back and records what happened, for the tests to wait on.
final class EchoHandler: WebSocketHandler {
    let events = Mutex<[String]>([])
    let closedSignal = DispatchSemaphore(value: 0)
    let openedSignal = DispatchSemaphore(value: 0)
    let connection = Mutex<WebSocketConnection?>(nil)

    func opened(_ connection: WebSocketConnection) {
        self.connection.withLock { $0 = connection }
        events.withLock { $0.append("opened") }
        openedSignal.signal()
    }

    func received(text: String) {
        events.withLock { $0.append("text \(text.count)") }
        let connection = connection.withLock { $0 }
        if text == "close please" {
            connection?.close(code: 4000, reason: "asked to")
        } else {
            connection?.send(text: text)
        }
    }

    func received(binary: [UInt8]) {
        events.withLock { $0.append("binary \(binary.count)") }
        connection.withLock { $0 }?.send(binary: binary)
    }

    func closed() {
        events.withLock { $0.append("closed") }
        closedSignal.signal()
    }
}

/// `base` plus `/ws/{name}` (refused with 401 for `?token=bad`) and `GET /plain`.
func webSocketRouter(base: Router = Router(), _ handler: @escaping @Sendable () -> any WebSocketHandler) -> Router {
    var router = base
    router.webSocket("/ws/{name}") { request, parameters in
        if request.query["token"] == "bad" {
            return .refuse(.error(401, code: "unauthorized", message: "the token has expired"))
        }
        return .accept(handler())
    }
    router.route("GET", "/plain") { _, _ in .json(200, ["plain": true]) }
    return router
}

@Suite("WebSocket")
struct WebSocketTests {
    @Test func echoesTextBinaryAndFragmentedMessages() throws {
        let handler = EchoHandler()
        try withServer(webSocketRouter { handler }) { server in
            let client = try WebSocketTestClient(port: server.port, path: "/ws/echo")
            try client.send(text: "hello")
            #expect(try client.receive() == .text("hello"))
            let bytes = (0..<1000).map { UInt8(truncatingIfNeeded: $0) }
            try client.send(binary: bytes)
            #expect(try client.receive() == .binary(bytes))
            try client.sendFragmented(text: "in three pieces", pieces: 3)
            #expect(try client.receive() == .text("in three pieces"))
            // Larger than lws' receive buffer and than the server's write chunks: split on both sides.
            let large = String(repeating: "0123456789", count: 30_000)
            try client.send(text: large)
            let framesBefore = client.framesRead
            #expect(try client.receive() == .text(large))
            #expect(client.framesRead - framesBefore > 1)
            try client.sendClose()
            #expect(try client.receive() == .close(1000))
            #expect(handler.closedSignal.wait(timeout: .now() + 5) == .success)
            #expect(handler.events.withLock { $0 } == ["opened", "text 5", "binary 1000", "text 15", "text 300000", "closed"])
        }
    }

    @Test func refusesBeforeTheUpgradeWithTheFactorysResponse() throws {
        try withServer(webSocketRouter { EchoHandler() }) { server in
            let refused = caught(WebSocketRefused.self) {
                _ = try WebSocketTestClient(port: server.port, path: "/ws/echo?token=bad")
            }
            #expect(refused?.response.status == 401)
            #expect(refused?.response.errorCode == "unauthorized")
            let unknown = caught(WebSocketRefused.self) {
                _ = try WebSocketTestClient(port: server.port, path: "/nowhere")
            }
            #expect(unknown?.response.status == 404)
            #expect(unknown?.response.errorCode == "not_found")
            // A plain GET on a WebSocket path says so.
            let plain = try HTTPTestClient(port: server.port).request("GET", "/ws/echo")
            #expect(plain.status == 400)
            #expect(plain.errorCode == "bad_request")
            // The server is still fine.
            #expect(try HTTPTestClient(port: server.port).request("GET", "/plain").status == 200)
        }
    }

    @Test func serverClosesWithACode() throws {
        let handler = EchoHandler()
        try withServer(webSocketRouter { handler }) { server in
            let client = try WebSocketTestClient(port: server.port, path: "/ws/x")
            try client.send(text: "close please")
            #expect(try client.receive() == .close(4000))
            #expect(handler.closedSignal.wait(timeout: .now() + 5) == .success)
            #expect(handler.connection.withLock { $0 }?.send(text: "late") == false)
        }
    }

    @Test func pushesFromAnotherThreadInOrder() throws {
        let handler = EchoHandler()
        try withServer(webSocketRouter { handler }) { server in
            let client = try WebSocketTestClient(port: server.port, path: "/ws/push")
            #expect(handler.openedSignal.wait(timeout: .now() + 5) == .success)
            let connection = try #require(handler.connection.withLock { $0 })
            let count = 500
            let pusher = Thread {
                for index in 0..<count { connection.send(text: "event \(index)") }
            }
            pusher.start()
            for index in 0..<count {
                #expect(try client.receive() == .text("event \(index)"))
            }
        }
    }

    @Test func clientThatVanishesMidStreamIsClosedAndTheServerGoesOn() throws {
        let handler = EchoHandler()
        try withServer(webSocketRouter { handler }) { server in
            let stream = try PlainTestStream(port: server.port)
            let client = try WebSocketTestClient(stream: stream, path: "/ws/vanish")
            #expect(handler.openedSignal.wait(timeout: .now() + 5) == .success)
            let connection = try #require(handler.connection.withLock { $0 })
            let chunk = [UInt8](repeating: 7, count: 64 * 1024)
            let pusher = Thread {
                // Keep pushing until the server notices the client is gone.
                while connection.send(binary: chunk) { Thread.sleep(forTimeInterval: 0.001) }
            }
            pusher.start()
            _ = try client.receive()
            stream.abort()
            #expect(handler.closedSignal.wait(timeout: .now() + 10) == .success)
            #expect(try HTTPTestClient(port: server.port).request("GET", "/plain").status == 200)
        }
    }

    @Test func stopClosesWebSocketsWithGoingAway() throws {
        let handler = EchoHandler()
        let server = try HTTPServer(configuration: ServerConfiguration(port: 0), router: webSocketRouter { handler })
        server.start()
        let client = try WebSocketTestClient(port: server.port, path: "/ws/stop")
        #expect(handler.openedSignal.wait(timeout: .now() + 5) == .success)
        let stopped = Thread { server.stop() }
        stopped.start()
        #expect(try client.receive() == .close(1001))
        try? client.sendClose(code: 1001)
        #expect(handler.closedSignal.wait(timeout: .now() + 5) == .success)
    }
}

@Suite("WebSocket limits")
struct WebSocketLimitsTests {
    @Test func tooLargeMessageClosesWith1009() throws {
        let handler = EchoHandler()
        var configuration = ServerConfiguration(port: 0)
        configuration.maxWebSocketMessageBytes = 10_000
        try withServer(webSocketRouter { handler }, configuration: configuration) { server in
            let client = try WebSocketTestClient(port: server.port, path: "/ws/big")
            try client.send(text: String(repeating: "a", count: 10_000))
            #expect(try client.receive() == .text(String(repeating: "a", count: 10_000)))
            try client.send(text: String(repeating: "a", count: 10_001))
            #expect(try client.receive() == .close(1009))
            try client.sendClose(code: 1009)
            #expect(handler.closedSignal.wait(timeout: .now() + 5) == .success)
        }
    }

    @Test func invalidUTF8TextClosesWith1007() throws {
        let handler = EchoHandler()
        try withServer(webSocketRouter { handler }) { server in
            let client = try WebSocketTestClient(port: server.port, path: "/ws/utf8")
            try client.sendFrame(opcode: 1, payload: [0x68, 0xff, 0xfe])
            #expect(try client.receive() == .close(1007))
        }
    }

    /// A server with a 256 KiB backlog and one client that never reads: `body` gets the server's side of it,
    /// and afterwards the connection must have been closed and reported closed.
    private func withClientThatDoesNotRead(path: String, _ body: (WebSocketConnection) throws -> Void) throws {
        let handler = EchoHandler()
        var configuration = ServerConfiguration(port: 0)
        configuration.maxWebSocketBacklogBytes = 256 * 1024
        try withServer(webSocketRouter { handler }, configuration: configuration) { server in
            let client = try WebSocketTestClient(port: server.port, path: path)
            #expect(handler.openedSignal.wait(timeout: .now() + 5) == .success)
            try body(try #require(handler.connection.withLock { $0 }))
            _ = client
            #expect(handler.closedSignal.wait(timeout: .now() + 10) == .success)
        }
    }

    @Test func aClientThatDoesNotReadIsCutOffAtTheBacklogLimit() throws {
        try withClientThatDoesNotRead(path: "/ws/lazy") { connection in
            // The client reads nothing: socket buffers fill, then the queue, then sends are refused.
            let chunk = [UInt8](repeating: 1, count: 64 * 1024)
            var accepted = 0
            let deadline = Date().addingTimeInterval(10)
            while connection.send(binary: chunk) && Date() < deadline { accepted += 1 }
            #expect(!connection.isOpen)
            #expect(accepted >= 4 && accepted < 1000, "\(accepted) chunks of 64 KiB were accepted")
        }
    }

    /// The hard case of the one above: the socket buffers are already full when the queue overflows, so nothing
    /// queued can ever be written, and a close that waited for the queue to drain would never happen.
    @Test func aClientWhoseSocketIsFullIsCutOffWithoutWaitingForTheQueue() throws {
        try withClientThatDoesNotRead(path: "/ws/stuck") { connection in
            // Send one chunk at a time and let the server write it out, until the kernel takes no more.
            let chunk = [UInt8](repeating: 2, count: 64 * 1024)
            var full = false
            for _ in 0..<2_000 where !full {
                #expect(connection.send(binary: chunk))
                let waitUntil = Date().addingTimeInterval(0.5)
                while connection.queuedBytes > 0 && Date() < waitUntil { usleep(2_000) }
                full = connection.queuedBytes > 0
            }
            #expect(full, "the socket buffers never filled")
            // Until refused (a few chunks; more if a slow machine made the buffers only look full).
            var refused = false
            let deadline = Date().addingTimeInterval(10)
            while !refused && Date() < deadline { refused = !connection.send(binary: chunk) }
            #expect(refused)
            #expect(!connection.isOpen)
        }
    }
}
