import Foundation
import HarkCore
import HarkHTTPTestSupport
import Synchronization
import Testing
@testable import HarkHTTP

@Suite("HTTP limits and misbehaving clients")
struct HTTPLimitsTests {
    @Test func bodyWithoutContentLengthIs411() throws {
        try withServer(sampleRouter()) { server in
            let chunked = try HTTPTestClient(port: server.port)
            try chunked.send("POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n")
            let response = try chunked.readResponse()
            #expect(response.status == 411)
            #expect(response.errorCode == "length_required")
            let bare = try HTTPTestClient(port: server.port).request("POST", "/echo")
            #expect(bare.status == 411)
        }
    }

    @Test func bodyLargerThanTheLimitIs413BeforeItIsRead() throws {
        var configuration = ServerConfiguration(port: 0)
        configuration.maxBodyBytes = 1000
        try withServer(sampleRouter(), configuration: configuration) { server in
            // Only the head is sent: the answer cannot wait for the body.
            let client = try HTTPTestClient(port: server.port)
            try client.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 50000000\r\n\r\n")
            let response = try client.readResponse()
            #expect(response.status == 413)
            #expect(response.errorCode == "payload_too_large")
            #expect(response.json?["error"]?["message"]?.stringValue?.contains("1000") == true)
            // The client already sending its body still reads the answer (lws closes after it).
            let eager = try HTTPTestClient(port: server.port)
            try eager.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 200000\r\n\r\n")
            try eager.stream.write([UInt8](repeating: 66, count: 100_000))
            #expect(try eager.readResponse().status == 413)
            // A body within the limit still goes through.
            let small = try HTTPTestClient(port: server.port).request("POST", "/echo", body: Array(repeating: 65, count: 1000))
            #expect(small.status == 200)
            #expect(small.body == Array(repeating: 65, count: 1000))
        }
    }

    @Test func bodyArrivingInPiecesIsAssembled() throws {
        try withServer(sampleRouter()) { server in
            let client = try HTTPTestClient(port: server.port)
            let body = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 * 7) }
            try client.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: \(body.count)\r\n\r\n")
            for start in stride(from: 0, to: body.count, by: 100_000) {
                try client.stream.write(Array(body[start..<min(body.count, start + 100_000)]))
                Thread.sleep(forTimeInterval: 0.02)
            }
            let response = try client.readResponse()
            #expect(response.status == 200)
            #expect(response.body == body)
        }
    }

    @Test func largeHeadersAre431() throws {
        var configuration = ServerConfiguration(port: 0)
        configuration.maxHeaderBytes = 4096
        try withServer(sampleRouter(), configuration: configuration) { server in
            let response = try HTTPTestClient(port: server.port)
                .request("GET", "/hello", headers: ["Cookie": String(repeating: "c", count: 5000)])
            #expect(response.status == 431)
            #expect(response.errorCode == "headers_too_large")
            // Far past lws' header buffer: answered or closed, never a crash.
            let huge = try HTTPTestClient(port: server.port)
            try? huge.send(method: "GET", path: "/hello", headers: ["X-Huge": String(repeating: "h", count: 200_000)])
            if let answer = try? huge.readResponse() { #expect(answer.status >= 400) }
            #expect(try HTTPTestClient(port: server.port).request("GET", "/hello").status == 200)
        }
    }

    @Test(arguments: [
        "\u{01}\u{02}garbage\u{ff}\u{fe}\r\n\r\n",
        "GET\r\n\r\n",
        "BREW /pot HTTP/1.1\r\n\r\n",
        "GET /hello HTTP/9.9\r\nHost: x\r\n\r\n",
        "GET /hello HTTP/1.1\r\nContent-Length: -5\r\n\r\n",
        "GET /hello HTTP/1.1\r\nContent-Length: many\r\n\r\n",
    ])
    func malformedRequestsAreAnsweredOrClosed(_ request: String) throws {
        try withServer(sampleRouter()) { server in
            let client = try HTTPTestClient(port: server.port, timeout: 5)
            try client.send(request)
            if let response = try? client.readResponse() {
                #expect(response.status >= 400 || request.contains("HTTP/9.9"))
            }
            #expect(try HTTPTestClient(port: server.port).request("GET", "/hello").status == 200)
        }
    }

    @Test func slowClientIsClosedWhileOthersAreServed() throws {
        var configuration = ServerConfiguration(port: 0)
        configuration.requestTimeoutSeconds = 1
        try withServer(sampleRouter(), configuration: configuration) { server in
            // Half a head, and half a body: both stall.
            let slowHead = try HTTPTestClient(port: server.port, timeout: 8)
            try slowHead.send("GET /hello HTTP/1.1\r\nHost: x\r\nX-Half: ")
            let slowBody = try HTTPTestClient(port: server.port, timeout: 8)
            try slowBody.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n0123456789")
            let started = Date()
            // Others are served meanwhile.
            for _ in 0..<5 {
                #expect(try HTTPTestClient(port: server.port).request("GET", "/hello").status == 200)
            }
            for slow in [slowHead, slowBody] {
                #expect(slow.waitForClose())
                let waited = Date().timeIntervalSince(started)
                #expect(waited > 0.5 && waited < 7.5, "the slow client was cut off after \(waited) s")
            }
        }
    }

    @Test func fiftyConcurrentClientsAllGetTheirOwnAnswers() throws {
        try withServer(sampleRouter()) { server in
            let results = Mutex<[Int: String]>([:])
            let failures = Mutex<[String]>([])
            DispatchQueue.concurrentPerform(iterations: 50) { index in
                do {
                    let client = try HTTPTestClient(port: server.port, timeout: 10)
                    for round in 0..<3 {
                        let id = "\(index)-\(round)"
                        let response = try client.request("GET", "/api/pictures/\(id)")
                        results.withLock { $0[index * 10 + round] = response.json?["id"]?.stringValue }
                    }
                } catch {
                    failures.withLock { $0.append("client \(index): \(error)") }
                }
            }
            #expect(failures.withLock { $0 }.isEmpty)
            let answers = results.withLock { $0 }
            #expect(answers.count == 150)
            for (key, value) in answers { #expect(value == "\(key / 10)-\(key % 10)") }
        }
    }

    @Test func aSlowHandlerDoesNotHoldUpOthers() throws {
        try withServer(sampleRouter()) { server in
            let slow = try HTTPTestClient(port: server.port)
            try slow.send(method: "GET", path: "/slow")
            let fast = try HTTPTestClient(port: server.port).request("GET", "/hello")
            #expect(fast.status == 200)
            #expect(try slow.readResponse().json?["slow"] == true)
        }
    }

    @Test func connectionsPastTheLimitGet503WhenNoneIsIdle() throws {
        var configuration = ServerConfiguration(port: 0)
        configuration.maxConnections = 2
        configuration.reservedConnections = 0
        var router = sampleRouter()
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        router.route("GET", "/hold") { _, _ in
            entered.signal()
            release.wait()
            return .json(200, ["held": true])
        }
        try withServer(router, configuration: configuration) { server in
            // Two requests in progress: neither connection can make way.
            let first = try HTTPTestClient(port: server.port, timeout: 10)
            let second = try HTTPTestClient(port: server.port, timeout: 10)
            for client in [first, second] {
                try client.send(method: "GET", path: "/hold")
                #expect(entered.wait(timeout: .now() + 10) == .success)
            }
            let third = try HTTPTestClient(port: server.port).request("GET", "/hello")
            #expect(third.status == 503)
            #expect(third.errorCode == "unavailable")
            // Answered, they are idle keep-alive connections: the next newcomer pushes one out and is served.
            release.signal()
            release.signal()
            for client in [first, second] { #expect(try client.readResponse().json?["held"] == true) }
            #expect(try HTTPTestClient(port: server.port).request("GET", "/hello").status == 200)
        }
    }

    @Test func largeResponsesArriveWhole() throws {
        try withServer(sampleRouter()) { server in
            let client = try HTTPTestClient(port: server.port)
            let response = try client.request("GET", "/big/3000000")
            #expect(response.body.count == 3_000_000)
            #expect(response.body == (0..<3_000_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
            let head = try client.request("HEAD", "/big/1000", expectBody: false)
            #expect(head.status == 200)
            #expect(head.headers["content-length"] == "1000")
            // Nothing was sent after the head: the next response parses.
            #expect(try client.request("GET", "/hello").status == 200)
        }
    }
}
