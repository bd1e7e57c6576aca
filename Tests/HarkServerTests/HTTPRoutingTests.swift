import Foundation
import HarkCore
import Testing
@testable import HarkServer

@Suite("HTTP routing")
struct HTTPRoutingTests {
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
}
