import Foundation
import HarkAppliance
import HarkCore
import HarkHTTPTestSupport
import HarkSpeech
import Synchronization
import Testing
@testable import HarkServer
import HarkTestSupport

/// What a page on another site, a stolen token and a greedy push-to-talk client can no longer do.
@Suite("Companion API hardening", .serialized)
struct CompanionAPIHardeningTests {
    typealias Bench = CompanionAPITests.Bench

    @Test(arguments: [
        ["origin": "https://evil.example"], ["origin": "null"], ["host": "evil.example"], ["host": "rebound.example:8080"],
        ["host": "127.0.0.1:8080", "origin": "http://evil.example:8080"],
    ])
    func pairingFromAnotherSiteIsForbiddenAndCostsNoAttempt(headers: [String: String]) throws {
        let bench = try Bench()
        let code = try bench.auth.issuePairingCode(lifetime: .seconds(60))
        for _ in 0..<10 {
            let r = bench.request("POST", "/api/pair", json: #"{"code": "000000"}"#, headers: headers)
            #expect(r.status == 403)
            #expect(CompanionAPITests.errorCode(r) == "forbidden")
        }
        #expect(bench.request("POST", "/api/login", json: #"{"user": "a", "password": "b"}"#, headers: headers).status == 403)
        // None of those counted: the right code, from the page's own origin, still works first time.
        let own = bench.request("POST", "/api/pair", json: #"{"code": "\#(code)"}"#,
                                headers: ["host": "hark.example:8443", "origin": "https://hark.example:8443"])
        #expect(own.status == 200)
    }

    @Test(arguments: [["host": "localhost:8080", "origin": "http://localhost:8080"], ["host": "127.0.0.1"], ["host": "[::1]:8080"], [:]])
    func ownNamesAndNonBrowsersMayPair(headers: [String: String]) throws {
        let bench = try Bench()
        let code = try bench.auth.issuePairingCode(lifetime: .seconds(60))
        #expect(bench.request("POST", "/api/pair", json: #"{"code": "\#(code)"}"#, headers: headers).status == 200)
    }

    @Test(arguments: ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "", "application/jsonx"])
    func jsonBodiesNeedTheJSONContentType(type: String) throws {
        let bench = try Bench()
        let code = try bench.auth.issuePairingCode(lifetime: .seconds(60))
        var headers = ["content-type": type]
        if type.isEmpty { headers = ["content-type": ""] }
        let r = bench.request("POST", "/api/pair", json: #"{"code": "\#(code)"}"#, headers: headers)
        #expect(r.status == 415)
        #expect(CompanionAPITests.errorCode(r) == "unsupported_media_type")
        // Refused before the code was looked at: it still works.
        #expect(bench.request("POST", "/api/pair", json: #"{"code": "\#(code)"}"#, headers: ["content-type": "application/json; charset=utf-8"]).status == 200)
        let token = try bench.token()
        #expect(bench.request("POST", "/api/devices/light", json: #"{"command": "on"}"#, token: token, headers: headers).status == 415)
        #expect(bench.request("POST", "/v1/workspaces/default/message", query: ["version": "1"], json: #"{"input": {"text": "hi"}}"#,
                              token: token, headers: headers).status == 415)
    }

    @Test func logoutEndsTheTokenAndRevokeEndsAnother() throws {
        let audits = AuthHardeningTests.Audits()
        let bench = try Bench(audit: audits.function)
        let mine = try bench.token()
        let phone = try bench.token()
        #expect(bench.request("GET", "/api/devices", token: mine).status == 200)
        let out = bench.request("POST", "/api/logout", token: mine)
        #expect(out.status == 200)
        #expect(bench.request("GET", "/api/devices", token: mine).status == 401)
        #expect(bench.request("POST", "/api/logout", token: mine).status == 401)
        // The lost phone's token, by the id the event log shows for its pairing.
        let phoneID = try #require(audits.list.withLock { $0.filter { $0.outcome == .paired }.last?.tokenID })
        #expect(bench.request("POST", "/api/tokens/revoke", json: #"{"id": "nonsense id!"}"#, token: phone).status == 400)
        let third = try bench.token()
        let revoked = bench.request("POST", "/api/tokens/revoke", json: #"{"id": "\#(phoneID)"}"#, token: third)
        #expect(revoked.status == 200)
        #expect(bench.request("GET", "/api/devices", token: phone).status == 401)
        #expect(bench.request("GET", "/api/devices", token: third).status == 200)
        #expect(audits.outcomes.filter { $0 == .loggedOut || $0 == .revoked } == [.loggedOut, .revoked])
    }

    @Test func aWebSocketClosesWhenItsTokenExpiresOrIsLoggedOut() throws {
        let clock = TestClock(Date())
        let bench = try Bench(now: clock.function, tokenCheckInterval: .milliseconds(100))
        let token = try bench.token()
        try withServer(bench.router) { server in
            let events = try WebSocketTestClient(port: server.port, path: "/api/events?access_token=\(token)", headers: ["Host": "127.0.0.1"], timeout: 10)
            // Open for a few checks while the token is good…
            Thread.sleep(forTimeInterval: 0.5)
            try events.send(text: "ping")
            clock.advance(3601)
            var message = try events.receive()
            while case .text = message { message = try events.receive() }
            #expect(message == .close(4401))

            clock.advance(-3601)
            let second = try bench.token()
            let other = try WebSocketTestClient(port: server.port, path: "/api/events?access_token=\(second)", headers: ["Host": "127.0.0.1"], timeout: 10)
            #expect(bench.request("POST", "/api/logout", token: second).status == 200)
            message = try other.receive()
            while case .text = message { message = try other.receive() }
            #expect(message == .close(4401))
        }
    }

    @Test func aWebSocketFromAnotherSiteOrWithoutAToken() throws {
        let bench = try Bench()
        let token = try bench.token()
        try withServer(bench.router) { server in
            let foreign = caught(WebSocketRefused.self) {
                _ = try WebSocketTestClient(port: server.port, path: "/api/events?access_token=\(token)",
                                            headers: ["Host": "127.0.0.1", "Origin": "https://evil.example"])
            }
            #expect(foreign?.response.status == 403)
            let rebound = caught(WebSocketRefused.self) {
                _ = try WebSocketTestClient(port: server.port, path: "/api/events?access_token=\(token)", headers: ["Host": "evil.example"])
            }
            #expect(rebound?.response.status == 403)
            let own = try WebSocketTestClient(port: server.port, path: "/api/events?access_token=\(token)",
                                              headers: ["Host": "hark.example", "Origin": "https://hark.example"])
            try own.sendClose()
        }
    }

    /// A bench whose push-to-talk has a real recogniser (the workspace's grammar, PocketSphinx's model).
    static func listeningBench(limits: ListenLimits) throws -> Bench {
        let workspace = try Workspace.load(from: CompanionAPITests.root.appendingPathComponent("Intents/home.json"))
        let recognizer = try SpeechRecognizer(workspace: workspace, model: SpeechModel(), options: RecognitionOptions(),
                                              pronunciations: try CustomThenESpeak(customDictionary: nil))
        let listening = WebListening(recognizer: recognizer, synthesizer: try SpeechSynthesizer())
        return try Bench(listening: listening, listenLimits: limits)
    }

    @Test func aListenSocketThatGoesQuietIsClosedAndTheNextBrowserTalks() throws {
        let bench = try Self.listeningBench(limits: ListenLimits(idleTimeout: .milliseconds(500)))
        let token = try bench.token()
        try withServer(bench.router) { server in
            let idle = try WebSocketTestClient(port: server.port, path: "/api/listen?access_token=\(token)", headers: ["Host": "127.0.0.1"], timeout: 15)
            var message = try idle.receive()
            while case .text = message { message = try idle.receive() }  // "listening", unless the close came first
            #expect(message == .close(1008))
            // The recogniser is free again (once the closed socket's handler has given it back, just after the close).
            var listening = false
            for _ in 0..<100 where !listening {
                let next = try WebSocketTestClient(port: server.port, path: "/api/listen?access_token=\(token)", headers: ["Host": "127.0.0.1"], timeout: 15)
                listening = try next.receive() == .text(#"{"type":"listening"}"#)
                try next.sendClose()
                if !listening { Thread.sleep(forTimeInterval: 0.05) }
            }
            #expect(listening)
        }
    }

    @Test func aTurnTakesAtMostItsShareOfAudio() throws {
        let bench = try Self.listeningBench(limits: ListenLimits(maximumAudio: .seconds(2), idleTimeout: .seconds(30)))
        let token = try bench.token()
        try withServer(bench.router) { server in
            let client = try WebSocketTestClient(port: server.port, path: "/api/listen?access_token=\(token)", headers: ["Host": "127.0.0.1"], timeout: 15)
            #expect(try client.receive() == .text(#"{"type":"listening"}"#))
            // 3 s of silence in 0.25 s pieces: the piece past 2 s ends it.
            let piece = [UInt8](repeating: 0, count: 8_000)
            var closed = false
            for _ in 0..<12 where !closed {
                do { try client.send(binary: piece) } catch { closed = true }
            }
            var message = try client.receive()
            var error: String?
            while case .text(let text) = message {
                if text.contains("\"error\"") { error = text }
                message = try client.receive()
            }
            #expect(message == .close(1009))
            #expect(error?.contains("at most 2 s of audio") == true)
        }
    }
}
