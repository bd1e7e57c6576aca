import Foundation
import HarkHTTPTestSupport
import Synchronization
import Testing
@testable import HarkHTTP
import HarkTestSupport

@Suite("HTTP server lifecycle")
struct HTTPServerTests {
    /// Listening sockets of this process on `port`, as (file, local address) from /proc/self/net/tcp{,6}.
    static func listeners(port: Int) -> [String] {
        let hex = String(format: "%04X", port)
        var found: [String] = []
        for file in ["/proc/self/net/tcp", "/proc/self/net/tcp6"] {
            let text = (try? String(contentsOfFile: file, encoding: .utf8)) ?? ""
            for line in text.split(separator: "\n") {
                let fields = line.split(separator: " ")
                if fields.count > 3 && fields[1].hasSuffix(":\(hex)") && fields[3] == "0A" { found.append(String(fields[1])) }
            }
        }
        return found
    }

    @Test func bindsOnlyTheRequestedAddress() throws {
        let loopback = try HTTPServer(configuration: ServerConfiguration(host: "127.0.0.1", port: 0), router: Router())
        defer { loopback.stop() }
        // 127.0.0.1 in /proc's little-endian hex, and nothing else (in particular not [::]).
        #expect(Self.listeners(port: loopback.port) == ["0100007F:" + String(format: "%04X", loopback.port)])
    }

    /// lws reports a body completion even for `Content-Length: 0`, after the request was dispatched at its head;
    /// the handler must still run once per request (a slow one used to run twice).
    @Test func aBodylessPostRunsItsHandlerOnce() throws {
        let calls = Mutex(0)
        var router = Router()
        router.route("POST", "/count") { _, _ in
            calls.withLock { $0 += 1 }
            Thread.sleep(forTimeInterval: 0.2)
            return .json(200, ["ok": true])
        }
        try withServer(router) { server in
            let client = try HTTPTestClient(port: server.port)
            for n in 1...3 {
                let response = try client.request("POST", "/count", headers: ["Content-Length": "0"])
                #expect(response.status == 200)
                Thread.sleep(forTimeInterval: 0.3)  // room for a second run to show itself
                #expect(calls.withLock { $0 } == n)
            }
        }
    }

    /// Servers on their own threads (the appliance runs its web server while rooms or tests run others) must
    /// not share lws' global log context: lws 4.3 counts every connection bound to it without a lock, and a
    /// lost update aborted a whole test run on Debian 13 (`lwsl_refcount_cx: Assertion 'cx->refcount'`). The
    /// same race in a plain C program aborted 5 runs in 10 at 500 connections each on four servers.
    @Test func concurrentServersKeepTheirOwnLogContext() throws {
        let servers = try (0..<4).map { _ in try HTTPServer(configuration: ServerConfiguration(port: 0), router: sampleRouter()) }
        defer { for server in servers { server.stop() } }
        for server in servers {
            // -1: lws before 4.3 (Debian 12) has no log contexts, so nothing is shared.
            #expect(server.logContextIsOwn == 1 || server.logContextIsOwn == -1)
            server.start()
        }
        let answered = Mutex(0)
        // Threads of their own, not dispatch's pool: the servers' handlers (and other tests') run on that pool.
        let finished = DispatchSemaphore(value: 0)
        for server in servers {
            let port = server.port
            Thread {
                for _ in 0..<300 {
                    guard let client = try? HTTPTestClient(port: port),
                          let response = try? client.request("GET", "/hello"), response.status == 200 else { continue }
                    answered.withLock { $0 += 1 }
                }
                finished.signal()
            }.start()
        }
        for _ in servers { finished.wait() }
        #expect(answered.withLock { $0 } == 4 * 300)
    }

    @Test func portZeroPicksAFreePortAndATakenPortIsAnError() throws {
        let first = try HTTPServer(configuration: ServerConfiguration(port: 0), router: Router())
        defer { first.stop() }
        #expect(first.port > 0)
        let error = caught(ServerError.self) {
            _ = try HTTPServer(configuration: ServerConfiguration(port: first.port), router: Router())
        }
        #expect(error?.message.contains("\(first.port)") == true)
    }

    @Test func outOfRangeSettingsAreRefusedByName() {
        var configuration = ServerConfiguration(port: 70000)
        #expect(throws: ServerError.self) { _ = try HTTPServer(configuration: configuration, router: Router()) }
        configuration = ServerConfiguration(port: 0, maxHeaderBytes: 100)
        let error = caught(ServerError.self) { _ = try HTTPServer(configuration: configuration, router: Router()) }
        #expect(error?.message.contains("maxHeaderBytes") == true)
        configuration = ServerConfiguration(
            port: 0, tls: .init(certificate: URL(fileURLWithPath: "/nonexistent/cert.pem"),
                                privateKey: URL(fileURLWithPath: "/nonexistent/key.pem")))
        let missing = caught(ServerError.self) { _ = try HTTPServer(configuration: configuration, router: Router()) }
        #expect(missing?.message.contains("/nonexistent/cert.pem") == true)
    }

    @Test func stopIsIdempotentAndFreesThePort() throws {
        let server = try HTTPServer(configuration: ServerConfiguration(port: 0), router: sampleRouter())
        let port = server.port
        server.start()
        #expect(try HTTPTestClient(port: port).request("GET", "/hello").status == 200)
        server.stop()
        server.stop()
        #expect(Self.listeners(port: port).isEmpty)
        // Never started: stop still releases the socket.
        let unstarted = try HTTPServer(configuration: ServerConfiguration(port: 0), router: Router())
        let unstartedPort = unstarted.port
        unstarted.stop()
        #expect(Self.listeners(port: unstartedPort).isEmpty)
    }

    @Test func stopWaitsForARequestInFlight() throws {
        let server = try HTTPServer(configuration: ServerConfiguration(port: 0), router: sampleRouter())
        server.start()
        let client = try HTTPTestClient(port: server.port)
        try client.send(method: "GET", path: "/slow")
        Thread.sleep(forTimeInterval: 0.05)
        server.stop()
        #expect(try client.readResponse().json?["slow"] == true)
    }
}
