/// Maps requests to handlers: routes by method and path pattern, WebSocket endpoints, middleware run before
/// them, and the web page's static files as the fallback. Unknown paths are 404, known paths with another
/// method 405 with `Allow`, both in the API's error shape.
///
/// Build it once, then give it to `HTTPServer`; it is a value, so later changes do not reach a running server.
/// The first registered route that matches wins.
public struct Router: Sendable {
    /// Answers a request; gets the path parameters by name (`{id}` → `["id": "12"]`). Runs on a concurrent
    /// queue, never on the network thread, so it may block (e.g. on the event store or a device).
    public typealias Handler = @Sendable (HTTPRequest, [String: String]) -> HTTPResponse
    /// Accepts or refuses a WebSocket upgrade. Runs on the network thread while the upgrade waits, so it must
    /// be quick (check the token, make the handler); the handler's `opened` runs elsewhere.
    public typealias WebSocketFactory = @Sendable (HTTPRequest, [String: String]) -> WebSocketUpgrade
    /// Runs before every route, static file and WebSocket factory: a response ends the request there (e.g. 401),
    /// nil lets it through. It runs on the network thread for WebSocket upgrades, so it must be quick.
    public typealias Middleware = @Sendable (HTTPRequest) -> HTTPResponse?

    private struct Route: Sendable {
        let method: String
        let pattern: Pattern
        let handler: Handler
    }

    private struct WebSocketRoute: Sendable {
        let pattern: Pattern
        let factory: WebSocketFactory
    }

    private var routes: [Route] = []
    private var webSocketRoutes: [WebSocketRoute] = []
    private var middleware: [Middleware] = []
    /// The web page, served for `GET /` and `GET /web/...` when no route matches.
    public var staticFiles: StaticFiles?

    public init(staticFiles: StaticFiles? = nil) {
        self.staticFiles = staticFiles
    }

    /// Adds a route: `route("GET", "/api/pictures/{id}") { request, parameters in ... }`. A GET route also
    /// answers HEAD (without the body).
    public mutating func route(_ method: String, _ pattern: String, _ handler: @escaping Handler) {
        routes.append(Route(method: method.uppercased(), pattern: Pattern(pattern), handler: handler))
    }

    /// Adds a WebSocket endpoint; the path may also have plain routes (`GET /api/events` is both).
    public mutating func webSocket(_ pattern: String, _ factory: @escaping WebSocketFactory) {
        webSocketRoutes.append(WebSocketRoute(pattern: Pattern(pattern), factory: factory))
    }

    /// Adds middleware, run in the order added before anything else.
    public mutating func before(_ hook: @escaping Middleware) {
        middleware.append(hook)
    }

    /// The response to a plain (not upgrade) request.
    public func respond(to request: HTTPRequest) -> HTTPResponse {
        for hook in middleware {
            if let response = hook(request) { return response }
        }
        // HEAD is answered by the GET route unless the path has its own; the server drops the body.
        let method = request.method == "HEAD"
            && !routes.contains(where: { $0.method == "HEAD" && $0.pattern.match(request.path) != nil })
            ? "GET" : request.method
        var allowed: [String] = []
        for route in routes {
            guard let parameters = route.pattern.match(request.path) else { continue }
            if route.method == method { return route.handler(request, parameters) }
            allowed.append(route.method)
            if route.method == "GET" { allowed.append("HEAD") }
        }
        if !allowed.isEmpty {
            var unique: [String] = []
            for method in allowed where !unique.contains(method) { unique.append(method) }
            return .error(405, code: "method_not_allowed",
                          message: "\(request.path) does not accept \(request.method); it accepts \(unique.joined(separator: ", "))")
                .adding(header: "allow", value: unique.joined(separator: ", "))
        }
        if webSocketRoutes.contains(where: { $0.pattern.match(request.path) != nil }) {
            return .error(400, code: "bad_request",
                          message: "\(request.path) is a WebSocket endpoint: connect with Upgrade: websocket")
        }
        if let response = staticFiles?.response(for: request) { return response }
        return .error(404, code: "not_found", message: "no such endpoint: \(request.method) \(request.path)")
    }

    /// The answer to a WebSocket upgrade request.
    public func upgrade(_ request: HTTPRequest) -> WebSocketUpgrade {
        var request = request
        request.isWebSocketUpgrade = true
        for hook in middleware {
            if let response = hook(request) { return .refuse(response) }
        }
        for route in webSocketRoutes {
            if let parameters = route.pattern.match(request.path) { return route.factory(request, parameters) }
        }
        if routes.contains(where: { $0.pattern.match(request.path) != nil }) {
            return .refuse(.error(400, code: "bad_request", message: "\(request.path) is not a WebSocket endpoint"))
        }
        return .refuse(.error(404, code: "not_found", message: "no such WebSocket endpoint: \(request.path)"))
    }
}
