/// One HTTP request as the router and handlers see it: an immutable value, safe to hand to any thread.
///
/// The server fills it from libwebsockets' parsed header table (`lws_hdr_copy`), so `headers` holds the
/// headers lws knows by name (every common one: `authorization`, `content-type`, `cookie`, `origin`, ...);
/// headers lws does not know are not listed.
public struct HTTPRequest: Sendable, Equatable {
    /// The method in upper case: "GET", "POST", ...
    public var method: String
    /// The path, percent-decoded, without the query: "/api/pictures/12".
    public var path: String
    /// The query's `name=value` pairs, decoded; a later duplicate replaces an earlier one.
    public var query: [String: String]
    /// Header values by lower-cased name.
    public var headers: [String: String]
    /// The body (empty when there is none); never longer than `ServerConfiguration.maxBodyBytes`.
    public var body: [UInt8]
    /// The peer's numeric IP address ("127.0.0.1", "::1"), empty when unknown.
    public var remoteAddress: String
    /// True when the router is deciding a WebSocket upgrade (`Router.upgrade`), false for a plain request.
    public var isWebSocketUpgrade = false

    public init(method: String, path: String, query: [String: String] = [:], headers: [String: String] = [:],
                body: [UInt8] = [], remoteAddress: String = "") {
        self.method = method
        self.path = path
        self.query = query
        self.headers = Dictionary(headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { _, last in last })
        self.body = body
        self.remoteAddress = remoteAddress
    }

    /// The value of a header, looked up case-insensitively.
    public func header(_ name: String) -> String? { headers[name.lowercased()] }
}
