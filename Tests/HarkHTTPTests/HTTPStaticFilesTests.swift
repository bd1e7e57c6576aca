import Foundation
import HarkCore
import HarkHTTPTestSupport
import Testing
@testable import HarkHTTP

@Suite("HTTP static files")
struct HTTPStaticFilesTests {
    /// A web/ directory with a page, a script, a subdirectory, a hidden file, and a secret next to it.
    static func makeSite() throws -> (root: URL, web: URL) {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("hark-static-\(UUID().uuidString)")
        let web = root.appendingPathComponent("web")
        try FileManager.default.createDirectory(at: web.appendingPathComponent("icons"), withIntermediateDirectories: true)
        try Data("<html>hark</html>".utf8).write(to: web.appendingPathComponent("index.html"))
        try Data("console.log(1)".utf8).write(to: web.appendingPathComponent("app.js"))
        try Data([0x89, 0x50, 0x4e, 0x47]).write(to: web.appendingPathComponent("icons/mic.png"))
        try Data("hidden".utf8).write(to: web.appendingPathComponent(".env"))
        try Data("secret".utf8).write(to: root.appendingPathComponent("secret.txt"))
        try FileManager.default.createSymbolicLink(at: web.appendingPathComponent("escape.txt"),
                                                   withDestinationURL: root.appendingPathComponent("secret.txt"))
        return (root, web)
    }

    @Test func servesThePageWithContentTypes() throws {
        let site = try Self.makeSite()
        defer { try? FileManager.default.removeItem(at: site.root) }
        try withServer(Router(staticFiles: StaticFiles(directory: site.web))) { server in
            let client = try HTTPTestClient(port: server.port)
            let page = try client.request("GET", "/")
            #expect(page.status == 200)
            #expect(page.text == "<html>hark</html>")
            #expect(page.headers["content-type"] == "text/html; charset=utf-8")
            let script = try client.request("GET", "/web/app.js")
            #expect(script.headers["content-type"] == "text/javascript; charset=utf-8")
            let icon = try client.request("GET", "/web/icons/mic.png")
            #expect(icon.headers["content-type"] == "image/png")
            #expect(icon.body == [0x89, 0x50, 0x4e, 0x47])
            let post = try client.request("POST", "/", body: [])
            #expect(post.status == 405)
        }
    }

    @Test(arguments: ["/web/../secret.txt", "/web/%2e%2e/secret.txt", "/web/icons/../../secret.txt", "/web/.env",
                      "/web/escape.txt", "/web/", "/web/icons", "/web/missing.js", "/secret.txt"])
    func nothingOutsideTheDirectoryIsServed(_ path: String) throws {
        let site = try Self.makeSite()
        defer { try? FileManager.default.removeItem(at: site.root) }
        try withServer(Router(staticFiles: StaticFiles(directory: site.web))) { server in
            let response = try HTTPTestClient(port: server.port).request("GET", path)
            #expect(response.status == 404, "\(path) gave \(response.status) \(response.text)")
            #expect(response.text != "secret" && response.text != "hidden")
        }
        // The router-level check, without lws' own path normalisation in front of it.
        let direct = StaticFiles(directory: site.web).response(for: HTTPRequest(method: "GET", path: path))
        #expect(direct == nil || direct?.status == 404, "\(path)")
    }
}
