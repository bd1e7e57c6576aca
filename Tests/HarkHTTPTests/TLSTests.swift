import COpenSSL
import CWebsockets
import Foundation
import HarkCore
import HarkHTTPTestSupport
import Testing
@testable import HarkHTTP
import HarkTestSupport

@Suite("TLS")
struct TLSTests {
    static func temporaryDirectory() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("hark-tls-\(UUID().uuidString)")
    }

    @Test func selfSignedCertificateIsMadeOnceAndKept() throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = try SelfSignedCertificate.ensure(directory: directory, hostnames: ["hark.local", "192.168.1.20"])
        let keyMode = try FileManager.default.attributesOfItem(atPath: first.key.path)[.posixPermissions] as? Int
        #expect(keyMode == 0o600)
        let certificate = try String(contentsOf: first.certificate, encoding: .utf8)
        #expect(certificate.hasPrefix("-----BEGIN CERTIFICATE-----"))
        #expect(try String(contentsOf: first.key, encoding: .utf8).contains("PRIVATE KEY"))

        // The names are in it, and it lasts about ten years.
        let parsed = try #require(certificate.withCString { text -> OpaquePointer? in
            let bio = BIO_new_mem_buf(text, -1)
            defer { BIO_free(bio) }
            return PEM_read_bio_X509(bio, nil, nil, nil)
        })
        defer { X509_free(parsed) }
        #expect(X509_check_host(parsed, "hark.local", 10, 0, nil) == 1)
        #expect(X509_check_host(parsed, "localhost", 9, 0, nil) == 1)
        #expect(X509_check_ip_asc(parsed, "192.168.1.20", 0) == 1)
        #expect(X509_check_ip_asc(parsed, "192.168.1.21", 0) != 1)
        var nineYears = time(nil) + 9 * 365 * 24 * 3600
        #expect(X509_cmp_time(X509_get0_notAfter(parsed), &nineYears) > 0)

        // A second run reuses it byte for byte; a new address makes a new one.
        let second = try SelfSignedCertificate.ensure(directory: directory, hostnames: ["hark.local", "192.168.1.20"])
        #expect(try Data(contentsOf: second.certificate) == Data(contentsOf: first.certificate))
        #expect(try Data(contentsOf: second.key) == Data(contentsOf: first.key))
        _ = try SelfSignedCertificate.ensure(directory: directory, hostnames: ["hark.local", "10.0.0.9"])
        #expect(try Data(contentsOf: second.certificate) != Data(certificate.utf8))
    }

    @Test func brokenFilesAreReplacedAndBadNamesRefused() throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data("not a certificate".utf8).write(to: directory.appendingPathComponent(SelfSignedCertificate.certificateFileName))
        let made = try SelfSignedCertificate.ensure(directory: directory, hostnames: [])
        #expect(try String(contentsOf: made.certificate, encoding: .utf8).hasPrefix("-----BEGIN CERTIFICATE-----"))
        let error = caught(ServerError.self) {
            _ = try SelfSignedCertificate.ensure(directory: directory, hostnames: ["bad name,DNS:evil.com"])
        }
        #expect(error?.message.contains("bad name") == true)
    }

    @Test func httpsAndWSSWorkWithTheSelfSignedCertificate() throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let files = try SelfSignedCertificate.ensure(directory: directory, hostnames: [])
        var router = sampleRouter()
        let handler = EchoHandler()
        router.webSocket("/ws") { _, _ in .accept(handler) }
        let configuration = ServerConfiguration(port: 0, tls: .init(certificate: files.certificate, privateKey: files.key))
        try withServer(router, configuration: configuration) { server in
            let stream = try TLSTestStream(port: server.port, trusting: files.certificate)
            #expect(stream.negotiatedProtocol == "http/1.1")
            let client = HTTPTestClient(stream: stream)
            let hello = try client.request("GET", "/hello")
            #expect(hello.json == ["hello": "world"])
            let echoed = try client.request("POST", "/echo", body: Array("over TLS".utf8))
            #expect(echoed.text == "over TLS")
            let big = try client.request("GET", "/big/200000")
            #expect(big.body.count == 200_000)

            let secure = try WebSocketTestClient(
                stream: try TLSTestStream(port: server.port, trusting: files.certificate), path: "/ws")
            try secure.send(text: "wss")
            #expect(try secure.receive() == .text("wss"))
        }
    }

    @Test func tls12OffersOnlyForwardSecretAEADSuites() throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let files = try SelfSignedCertificate.ensure(directory: directory, hostnames: [])
        let configuration = ServerConfiguration(port: 0, tls: .init(certificate: files.certificate, privateKey: files.key))
        try withServer(sampleRouter(), configuration: configuration) { server in
            // CBC with SHA-1 or SHA-256 MACs, with and without ECDHE: a client offering only these is refused.
            let cbc = "ECDHE-ECDSA-AES128-SHA:ECDHE-RSA-AES128-SHA:ECDHE-ECDSA-AES256-SHA384:ECDHE-RSA-AES256-SHA384:AES128-SHA:AES256-SHA:AES128-SHA256"
            #expect(throws: TestClientError.self) { _ = try TLSTestStream(port: server.port, trusting: files.certificate, tls12Ciphers: cbc) }
            // Static RSA key exchange with GCM: no forward secrecy, refused too.
            #expect(throws: TestClientError.self) {
                _ = try TLSTestStream(port: server.port, trusting: files.certificate, tls12Ciphers: "AES128-GCM-SHA256:AES256-GCM-SHA384")
            }
            for aead in ["ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256", "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305"] {
                let stream = try TLSTestStream(port: server.port, trusting: files.certificate, tls12Ciphers: aead)
                #expect(try HTTPTestClient(stream: stream).request("GET", "/hello").status == 200, "\(aead)")
            }
        }
    }

    @Test func alpnOffersHTTP2OnlyWhenAsked() throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let files = try SelfSignedCertificate.ensure(directory: directory, hostnames: [])
        for http2 in [true, false] {
            let configuration = ServerConfiguration(
                port: 0, tls: .init(certificate: files.certificate, privateKey: files.key, http2: http2))
            try withServer(sampleRouter(), configuration: configuration) { server in
                let stream = try TLSTestStream(port: server.port, trusting: files.certificate, alpn: ["h2", "http/1.1"])
                #expect(stream.negotiatedProtocol == (http2 ? "h2" : "http/1.1"))
            }
        }
    }

    @Test func plainHTTPOnTheTLSPortIsRefusedWithoutHarm() throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let files = try SelfSignedCertificate.ensure(directory: directory, hostnames: [])
        let configuration = ServerConfiguration(port: 0, tls: .init(certificate: files.certificate, privateKey: files.key))
        try withServer(sampleRouter(), configuration: configuration) { server in
            let plain = try HTTPTestClient(port: server.port)
            try plain.send(method: "GET", path: "/hello")
            #expect((try? plain.readResponse()) == nil)
            let client = HTTPTestClient(stream: try TLSTestStream(port: server.port, trusting: files.certificate))
            #expect(try client.request("GET", "/hello").status == 200)
        }
    }
}
