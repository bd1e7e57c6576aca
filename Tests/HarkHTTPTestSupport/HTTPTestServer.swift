import Foundation
import HarkCore
import HarkHTTP

/// Runs `body` against a started server on a free loopback port, then stops it.
package func withServer<T>(_ router: Router, configuration: ServerConfiguration = ServerConfiguration(port: 0),
                   _ body: (HTTPServer) throws -> T) throws -> T {
    let server = try HTTPServer(configuration: configuration, router: router)
    server.start()
    defer { server.stop() }
    return try body(server)
}

/// A router with a few routes the HTTP tests share.
package func sampleRouter() -> Router {
    var router = Router()
    router.route("GET", "/hello") { _, _ in .json(200, ["hello": "world"]) }
    router.route("GET", "/api/pictures/{id}") { request, parameters in
        .json(200, ["id": .string(parameters["id"] ?? ""), "path": .string(request.path)])
    }
    router.route("DELETE", "/api/pictures/{id}") { _, parameters in .json(200, ["deleted": .string(parameters["id"] ?? "")]) }
    router.route("GET", "/echo") { request, _ in
        var query = JSONObject()
        for (name, value) in request.query { query[name] = .string(value) }
        var headers = JSONObject()
        for (name, value) in request.headers { headers[name] = .string(value) }
        return .json(200, ["method": .string(request.method), "path": .string(request.path), "query": .object(query),
                           "headers": .object(headers), "remote": .string(request.remoteAddress)])
    }
    router.route("POST", "/echo") { request, _ in .bytes(200, "application/octet-stream", request.body) }
    router.route("GET", "/big/{bytes}") { _, parameters in
        let count = Int(parameters["bytes"] ?? "") ?? 0
        return .bytes(200, "application/octet-stream", (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
    }
    router.route("GET", "/slow") { _, _ in
        Thread.sleep(forTimeInterval: 0.3)
        return .json(200, ["slow": true])
    }
    return router
}
