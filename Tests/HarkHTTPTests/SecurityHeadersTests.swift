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
}
