import COpenSSL
import Foundation
import HarkCore
import HarkHTTPTestSupport
import Synchronization
import Testing
@testable import HarkHTTP
import HarkTestSupport

/// The client side (`HTTPClient`, `WebSocketClient` over `ClientStream`) against the real server, plain and TLS.
@Suite("Client")
struct ClientTests {
    @Test func addressesAreParsedAndBadOnesNamed() throws {
        let plain = try ServerAddress(url: "http://kitchen.local:8080")
        #expect(plain == ServerAddress.expected(secure: false, host: "kitchen.local", port: 8080))
        #expect(try ServerAddress(url: "https://192.168.1.20/").port == 443)
        #expect(try ServerAddress(url: "https://[fe80::1]:8443").host == "fe80::1")
        #expect(try ServerAddress(url: "https://[fe80::1]:8443").description == "https://[fe80::1]:8443")
        for (bad, says) in [("ftp://x", "not an http"), ("http://x/api", "nothing more"), ("http://x:99999", "port"),
                            ("http://u@x", "nothing more"), ("https://", "nothing more"), ("http://[::1", "closing ]")] {
            let error = caught(ClientError.self) { _ = try ServerAddress(url: bad) }
            #expect(error?.message.contains(says) == true, "\(bad): \(String(describing: error))")
        }
    }

    @Test func requestsGetStatusHeadersAndBody() throws {
        try withServer(sampleRouter()) { server in
            let address = try ServerAddress(url: "http://127.0.0.1:\(server.port)")
            let hello = try HTTPClient.request(address, method: "GET", path: "/hello", pin: nil)
            #expect(hello.status == 200)
            #expect(try hello.json("hello")["hello"]?.stringValue == "world")
            let echoed = try HTTPClient.request(address, method: "GET", path: "/echo", token: "abc", pin: nil)
            #expect(try echoed.json("echo")["headers"]?["authorization"]?.stringValue == "Bearer abc")
            let body = JSONValue.object(JSONObject([("x", .number(1))]))
            let posted = try HTTPClient.request(address, method: "POST", path: "/echo", json: body, pin: nil)
            #expect(posted.body == Array(body.serialized().utf8))
            let big = try HTTPClient.request(address, method: "GET", path: "/big/300000", pin: nil)
            #expect(big.body.count == 300_000 && big.body[299_999] == UInt8(truncatingIfNeeded: 299_999 &* 31 &+ 7))
            let missing = try HTTPClient.request(address, method: "GET", path: "/nothing", pin: nil)
            #expect(missing.status == 404)
        }
        let refused = caught(ClientError.self) {
            _ = try HTTPClient.request(try ServerAddress(url: "http://127.0.0.1:1"), method: "GET", path: "/", pin: nil, timeout: 2)
        }
        #expect(refused?.message.contains("cannot connect to http://127.0.0.1:1") == true)
    }

    @Test func tlsTrustsOnlyThePinnedCertificate() throws {
        let directory = TLSTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let files = try SelfSignedCertificate.ensure(directory: directory, hostnames: [])
        let configuration = ServerConfiguration(port: 0, tls: .init(certificate: files.certificate, privateKey: files.key))
        let expected = try #require(Fingerprint.sha256(ofCertificateFile: files.certificate))
        try withServer(webSocketRouter(base: sampleRouter()) { EchoHandler() }, configuration: configuration) { server in
            let address = try ServerAddress(url: "https://127.0.0.1:\(server.port)")
            // First contact (hark link) sees the fingerprint; it is the certificate file's.
            let seen = Mutex<[UInt8]>([])
            _ = try HTTPClient.request(address, method: "GET", path: "/hello", pin: nil, allowUnpinned: true) { hash in seen.withLock { $0 = hash } }
            #expect(seen.withLock { $0 } == expected)
            #expect(try HTTPClient.request(address, method: "GET", path: "/hello", pin: expected).status == 200)

            let unpinned = caught(ClientError.self) { _ = try HTTPClient.request(address, method: "GET", path: "/hello", pin: nil) }
            #expect(unpinned?.message.contains("no certificate fingerprint") == true)
            var other = expected
            other[0] ^= 1
            let wrong = caught(ClientError.self) { _ = try HTTPClient.request(address, method: "GET", path: "/echo", token: "secret", pin: other) }
            #expect(wrong?.message.contains("not the one it was linked with") == true)

            let socket = try Self.echoSocket(address, pin: expected)
            try socket.client.send(.text("over TLS"))
            #expect(socket.next() == .text("over TLS"))
            socket.client.close()
        }
    }

    @Test func webSocketsCarryMessagesCloseCodesAndRefusals() throws {
        try withServer(webSocketRouter { EchoHandler() }) { server in
            let address = try ServerAddress(url: "http://127.0.0.1:\(server.port)")
            let socket = try Self.echoSocket(address, pin: nil)
            try socket.client.send(.text("hello"))
            #expect(socket.next() == .text("hello"))
            for size in [0, 125, 126, 65_535, 65_536, 200_000] {
                let bytes = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 7) }
                try socket.client.send(.binary(bytes))
                #expect(socket.next() == .binary(bytes), "\(size) bytes")
            }
            try socket.client.send(.text("close please"))
            #expect(socket.closedWith() == "4000 asked to")
            #expect(!socket.client.isOpen)

            let refused = caught(ClientError.self) {
                _ = try WebSocketClient.connect(address, path: "/ws/echo?token=bad", token: nil, pin: nil, received: { _ in }, closed: { _, _ in })
            }
            #expect(refused?.status == 401)
            #expect(refused?.message.contains("the token has expired") == true)
            let notSocket = caught(ClientError.self) {
                _ = try WebSocketClient.connect(address, path: "/plain", token: nil, pin: nil, received: { _ in }, closed: { _, _ in })
            }
            #expect(notSocket != nil)
        }
    }

    @Test func masksAndLengthsFollowTheRFC() {
        // RFC 6455 section 1.3's example key and accept value.
        #expect(WebSocketClient.acceptValue(for: "dGhlIHNhbXBsZSBub25jZQ==") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
        // A server frame must not be masked; an incomplete one waits.
        #expect(WebSocketClient.frame(in: [0x81, 0x85, 1, 2, 3, 4, 5])?.2 == nil)
        #expect(WebSocketClient.frame(in: [0x82, 126, 0x01]) == nil)
        #expect(WebSocketClient.frame(in: [0x81, 2, 0x68, 0x69])?.2 == [0x68, 0x69])
    }

    // MARK: Helpers

    final class Collected: Sendable {
        let messages = Mutex<[WebSocketClient.Message]>([])
        let closed = Mutex<String?>(nil)
        let signal = DispatchSemaphore(value: 0)
    }

    struct Socket {
        let client: WebSocketClient
        let collected: Collected

        func next() -> WebSocketClient.Message? {
            guard collected.signal.wait(timeout: .now() + 10) == .success else { return nil }
            return collected.messages.withLock { $0.isEmpty ? nil : $0.removeFirst() }
        }

        func closedWith() -> String? {
            _ = collected.signal.wait(timeout: .now() + 10)
            return collected.closed.withLock { $0 }
        }
    }

    static func echoSocket(_ address: ServerAddress, pin: [UInt8]?) throws -> Socket {
        let collected = Collected()
        let client = try WebSocketClient.connect(address, path: "/ws/echo", token: "t", pin: pin, received: { message in
            collected.messages.withLock { $0.append(message) }
            collected.signal.signal()
        }, closed: { code, reason in
            collected.closed.withLock { $0 = "\(code) \(reason)" }
            collected.signal.signal()
        })
        return Socket(client: client, collected: collected)
    }
}

extension ServerAddress {
    static func expected(secure: Bool, host: String, port: Int) -> ServerAddress {
        var address = try! ServerAddress(url: "http://x:1")
        address.secure = secure
        address.host = host
        address.port = port
        return address
    }
}
