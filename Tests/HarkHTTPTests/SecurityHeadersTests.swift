import Foundation
import HarkHTTPTestSupport
import Testing
@testable import HarkHTTP

/// The headers every response carries so a browser confines the page: CSP, no sniffing, no framing, no Referer.
@Suite struct SecurityHeadersTests {
    @Test func everyResponseCarriesThem() throws {
        var router = sampleRouter()
        router.route("GET", "/framed") { _, _ in HTTPResponse.json(200, [:]).adding(header: "X-Frame-Options", value: "SAMEORIGIN") }
        try withServer(router) { server in
            let client = try HTTPTestClient(port: server.port)
            for path in ["/hello", "/nowhere"] {
                let r = try client.request("GET", path)
                #expect(r.headers["x-content-type-options"] == "nosniff", "\(path)")
                #expect(r.headers["x-frame-options"] == "DENY", "\(path)")
                #expect(r.headers["referrer-policy"] == "no-referrer", "\(path)")
                let csp = try #require(r.headers["content-security-policy"], "\(path)")
                #expect(csp.contains("default-src 'self'") && csp.contains("frame-ancestors 'none'") && csp.contains("object-src 'none'"))
                #expect(!csp.contains("unsafe-inline") && !csp.contains("unsafe-eval"))
            }
            // A response's own value wins.
            #expect(try client.request("GET", "/framed").headers["x-frame-options"] == "SAMEORIGIN")
        }
    }

    /// A header value from user input cannot add headers (CR, LF and other controls go; a tab stays), and a
    /// name that is not a plain token is dropped, on the wire.
    @Test func controlCharactersCannotForgeHeaders() throws {
        var router = sampleRouter()
        router.route("GET", "/forged") { _, _ in
            HTTPResponse.json(200, [:])
                .adding(header: "X-Echo", value: "a\r\nSet-Cookie: stolen=1\u{7F}\u{200B}\tb é")
                .adding(header: "X Bad:Name", value: "dropped")
        }
        try withServer(router) { server in
            let r = try HTTPTestClient(port: server.port).request("GET", "/forged")
            #expect(r.status == 200)
            #expect(r.headers["x-echo"] == "aSet-Cookie: stolen=1\tb é")
            #expect(r.headers["set-cookie"] == nil)
            #expect(!r.headers.keys.contains { $0.hasPrefix("x bad") || $0.contains(":") })
        }
        #expect(LWSServer.headerValue("plain value; q=1") == "plain value; q=1")
        #expect(LWSServer.isHeaderName("content-type") && !LWSServer.isHeaderName("") && !LWSServer.isHeaderName("a:b")
                && !LWSServer.isHeaderName("a b") && !LWSServer.isHeaderName("caf\u{E9}"))
    }
}
