import Foundation
import HarkCore
import HarkHTTPTestSupport
import Testing
@testable import HarkHTTP

@Suite("HTTP requests and responses")
struct HTTPRequestTests {
    @Test func routesAndParameters() throws {
        try withServer(sampleRouter()) { server in
            let client = try HTTPTestClient(port: server.port)
            let hello = try client.request("GET", "/hello")
            #expect(hello.status == 200)
            #expect(hello.json == ["hello": "world"])
            #expect(hello.headers["content-type"]?.hasPrefix("application/json") == true)
            // The same connection is kept alive for the next request.
            let picture = try client.request("GET", "/api/pictures/42")
            #expect(picture.json?["id"] == "42")
            let deleted = try client.request("DELETE", "/api/pictures/7")
            #expect(deleted.json?["deleted"] == "7")
        }
    }

    @Test func unknownPathIs404AndWrongMethodIs405WithAllow() throws {
        try withServer(sampleRouter()) { server in
            let client = try HTTPTestClient(port: server.port)
            let missing = try client.request("GET", "/api/nothing")
            #expect(missing.status == 404)
            #expect(missing.errorCode == "not_found")
            #expect(missing.json?["error"]?["message"]?.stringValue?.isEmpty == false)
            let wrong = try client.request("PUT", "/api/pictures/3", body: [])
            #expect(wrong.status == 405)
            #expect(wrong.errorCode == "method_not_allowed")
            #expect(wrong.headers["allow"] == "GET, HEAD, DELETE")
        }
    }

    @Test func pathQueryHeadersAndAddressReachTheHandler() throws {
        try withServer(sampleRouter()) { server in
            let client = try HTTPTestClient(port: server.port)
            let response = try client.request("GET", "/echo?name=a%20b&plus=1+2&amp=x%26y&flag&access_token=abc.def_ghi",
                                              headers: ["Authorization": "Bearer t0k", "X-Custom-Thing": "ignored?"])
            let json = try #require(response.json)
            #expect(json["method"] == "GET")
            #expect(json["path"] == "/echo")
            #expect(json["query"]?["name"] == "a b")
            #expect(json["query"]?["plus"] == "1 2")
            #expect(json["query"]?["amp"] == "x&y")
            #expect(json["query"]?["flag"] == "")
            #expect(json["query"]?["access_token"] == "abc.def_ghi")
            #expect(json["headers"]?["authorization"] == "Bearer t0k")
            #expect(json["headers"]?["host"] == "localhost")
            #expect(json["remote"] == "127.0.0.1")
            let decoded = try client.request("GET", "/api/pictures/a%20b")
            #expect(decoded.json?["id"] == "a b")
        }
    }

    @Test func responseHelpersHaveTheContractsShapes() throws {
        let error = HTTPResponse.error(401, code: "unauthorized", message: "the token has expired")
        #expect(error.status == 401)
        #expect(error.headers["content-type"] == "application/json; charset=utf-8")
        #expect(try JSONValue.parse(String(decoding: error.body, as: UTF8.self))
            == ["error": ["code": "unauthorized", "message": "the token has expired"]])
        let bytes = HTTPResponse.bytes(200, "image/jpeg", [0xff, 0xd8])
        #expect(bytes.headers == ["content-type": "image/jpeg"])
        #expect(HTTPResponse(status: 204, headers: ["X-A": "1"]).headers == ["x-a": "1"])
        #expect(HTTPRequest(method: "GET", path: "/", headers: ["Content-Type": "text/plain"]).header("CONTENT-TYPE") == "text/plain")
    }

    @Test func customResponseHeadersAreSent() throws {
        var router = Router()
        router.route("GET", "/limited") { _, _ in
            .error(429, code: "too_many_requests", message: "slow down").adding(header: "Retry-After", value: "30")
        }
        router.route("GET", "/injected") { _, _ in
            HTTPResponse(status: 200, headers: ["X-Echo": "a\r\nSet-Cookie: x=1", "Bad Name": "x"])
        }
        try withServer(router) { server in
            let response = try HTTPTestClient(port: server.port).request("GET", "/limited")
            #expect(response.status == 429)
            #expect(response.headers["retry-after"] == "30")
            #expect(response.errorCode == "too_many_requests")
            // A CR LF smuggled into a header value cannot start a header of its own.
            let injected = try HTTPTestClient(port: server.port).request("GET", "/injected")
            #expect(injected.status == 200)
            #expect(injected.headers["set-cookie"] == nil)
            #expect(injected.headers["x-echo"] == "aSet-Cookie: x=1")
            #expect(injected.headers["bad name"] == nil)
        }
    }
}

@Suite("HTTP router")
struct HTTPRouterTests {
    @Test func middlewareRunsFirstAndCanStopTheRequest() {
        var router = Router()
        router.before { request in
            request.path.hasPrefix("/api/") && request.header("authorization") == nil
                ? .error(401, code: "unauthorized", message: "missing token") : nil
        }
        router.route("GET", "/api/x") { _, _ in .json(200, ["x": 1]) }
        router.route("GET", "/open") { _, _ in .json(200, ["open": true]) }
        #expect(router.respond(to: HTTPRequest(method: "GET", path: "/api/x")).status == 401)
        #expect(router.respond(to: HTTPRequest(method: "GET", path: "/api/x", headers: ["Authorization": "Bearer a"])).status == 200)
        #expect(router.respond(to: HTTPRequest(method: "GET", path: "/open")).status == 200)
        // The middleware also guards WebSocket upgrades.
        if case .refuse(let response) = router.upgrade(HTTPRequest(method: "GET", path: "/api/events")) {
            #expect(response.status == 401)
        } else {
            Issue.record("the upgrade was not refused")
        }
    }

    @Test(arguments: [
        ("/api/pictures/{id}", "/api/pictures/12", ["id": "12"]),
        ("/api/pictures/{id}", "/api/pictures/", nil),
        ("/api/pictures/{id}", "/api/pictures/12/more", nil),
        ("/v1/workspaces/{workspace}/message", "/v1/workspaces/home/message", ["workspace": "home"]),
        ("/", "/", [:]),
        ("/a/b", "/a/b", [:]),
        ("/a/b", "/a/c", nil),
    ] as [(String, String, [String: String]?)])
    func patternsMatchWholeSegments(_ pattern: String, _ path: String, _ expected: [String: String]?) {
        #expect(Router.Pattern(pattern).match(path) == expected)
    }

    @Test func firstRegisteredRouteWins() {
        var router = Router()
        router.route("GET", "/api/devices/{name}") { _, parameters in .json(200, ["name": .string(parameters["name"] ?? "")]) }
        router.route("GET", "/api/devices/all") { _, _ in .json(200, ["all": true]) }
        #expect(router.respond(to: HTTPRequest(method: "GET", path: "/api/devices/all")).body == Array(#"{"name":"all"}"#.utf8))
    }
}
