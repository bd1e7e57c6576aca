import Foundation
import HarkCore
import Testing

@testable import HarkWyoming

#if canImport(Glibc)
import Glibc
#endif

/// The server over real sockets on an ephemeral port, with the intent service only (no decoders): events in
/// and out, a broken frame, and the client limit. The speech services are driven by the real `wyoming`
/// client in tests/wyoming.
@Suite("Wyoming server", .serialized)
struct WyomingServerTests {
    /// A blocking TCP client with a receive timeout, so a test fails rather than hangs.
    final class Client {
        let fd: Int32
        var reader = WyomingFrameReader()

        init(port: Int) throws {
            fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = UInt16(port).bigEndian
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            try #require(connected == 0, "connect: \(String(cString: strerror(errno)))")
            var timeout = timeval(tv_sec: 20, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        }

        deinit { close(fd) }

        func send(_ bytes: [UInt8]) {
            _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        }

        func send(_ event: WyomingEvent) { send(event.encoded()) }

        /// The next event, or nil when the server closed the connection (or 20 s passed).
        func next() throws -> WyomingEvent? {
            var chunk = [UInt8](repeating: 0, count: 65_536)
            while true {
                if let event = try reader.next() { return event }
                let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                guard n > 0 else { return nil }
                reader.append(chunk[0..<n])
            }
        }
    }

    static func server(connections: Int = 4) throws -> WyomingServer {
        let workspace = WyomingSessionTests.workspace
        var limits = WyomingLimits()
        limits.connections = connections
        limits.headerBytes = 256
        let services = WyomingServices(intent: .init(model: "home", matcher: Matcher(workspace: workspace), threshold: 0.2), version: "test")
        return try WyomingServer(address: WyomingAddress(host: "127.0.0.1", port: 0), services: services, limits: limits)
    }

    @Test("events in, answers out, several on one connection")
    func roundTrips() throws {
        let server = try Self.server()
        defer { server.stop() }
        #expect(server.address.port > 0)
        let client = try Client(port: server.address.port)
        client.send(WyomingEvent("describe").encoded() + WyomingEvent("recognize", ["text": "take a picture"]).encoded())
        let info = try #require(try client.next())
        #expect(info.type == "info" && info.data["intent"]?[0]?["name"] == "hark-intent" && info.data["asr"] == [])
        #expect(try client.next()?.data["name"] == "TakePicture")
        client.send(WyomingEvent("transcribe"))
        let error = try #require(try client.next())
        #expect(error.type == "error" && error.data["code"] == "service-unavailable")
    }

    @Test("a broken frame is answered with an error, then the connection is closed; the server goes on")
    func brokenFrame() throws {
        let server = try Self.server()
        defer { server.stop() }
        let client = try Client(port: server.address.port)
        client.send(Array(repeating: UInt8(ascii: "{"), count: 300))
        let error = try #require(try client.next())
        #expect(error.data["code"] == "header-too-long" && error.data["text"]?.stringValue?.contains("256") == true)
        #expect(try client.next() == nil)
        let next = try Client(port: server.address.port)
        next.send(WyomingEvent("ping", ["text": "ok"]))
        #expect(try next.next() == WyomingEvent("pong", ["text": "ok"]))
    }

    @Test("clients over the limit are told so and closed; places free up when clients leave")
    func clientLimit() throws {
        let server = try Self.server(connections: 2)
        defer { server.stop() }
        var clients = [try Client(port: server.address.port), try Client(port: server.address.port)]
        for client in clients {
            client.send(WyomingEvent("ping"))
            #expect(try client.next()?.type == "pong")
        }
        let third = try Client(port: server.address.port)
        #expect(try third.next()?.data["code"] == "too-many-clients")
        clients.removeAll()
        // The server notices the two leave; then a client is served again.
        var served = false
        for _ in 0..<100 where !served {
            let client = try Client(port: server.address.port)
            client.send(WyomingEvent("ping"))
            served = try client.next()?.type == "pong"
            if !served { usleep(50_000) }
        }
        #expect(served)
    }
}
