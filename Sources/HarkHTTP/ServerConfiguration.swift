import Foundation

/// Where and how `HTTPServer` listens, and the limits it enforces on every client.
///
/// The defaults follow docs/server-api.md: loopback on 8080, 1 MiB bodies, 8 KiB of headers.
public struct ServerConfiguration: Sendable, Equatable {
    /// A PEM certificate and its private key: the server speaks HTTPS (and WSS) with them.
    public struct TLS: Sendable, Equatable {
        public var certificate: URL
        public var privateKey: URL
        /// Offer HTTP/2 through ALPN. Browsers then use it for requests and, Chromium at least, for WebSockets
        /// too (RFC 8441), where a refused upgrade opens and closes at once with code 4000 + the status.
        public var http2: Bool

        public init(certificate: URL, privateKey: URL, http2: Bool = true) {
            self.certificate = certificate
            self.privateKey = privateKey
            self.http2 = http2
        }
    }

    /// The address to bind ("127.0.0.1", "::1", "0.0.0.0" or an interface name); nil listens on every interface.
    public var host: String?
    /// The TCP port; 0 binds any free port (`HTTPServer.port` tells which).
    public var port: Int
    /// HTTPS when set, plain HTTP otherwise.
    public var tls: TLS?
    /// Largest accepted request body; a larger `Content-Length` is answered 413 before the body is read.
    public var maxBodyBytes: Int
    /// Largest accepted request head; larger is answered 431 (or closed, past twice this size).
    public var maxHeaderBytes: Int
    /// Most simultaneous client connections. A connection past it first pushes out the longest-idle one (a
    /// client that has not sent a request head, or a kept-alive one between requests); when every connection is
    /// busy its requests are answered 503.
    public var maxConnections: Int
    /// Most simultaneous connections from one address (IPv6: one /64), with the same pushing out and 503.
    public var maxConnectionsPerAddress: Int
    /// Connections kept for plain requests (the page, the API): WebSockets may take at most
    /// `maxConnections - reservedConnections` in all; upgrades past it are answered 503.
    public var reservedConnections: Int
    /// Most simultaneous WebSockets from one address (IPv6: one /64); upgrades past it are answered 503.
    public var maxWebSocketsPerAddress: Int
    /// Seconds a WebSocket may be silent before the server pings it; one that has not answered (or sent
    /// anything) within `webSocketHangupSeconds` is closed. The defaults (5 s, 10 s) notice a phone that left
    /// the Wi-Fi within 10 s, which a room must (a departed member stops being mixed and is shown as gone);
    /// browsers answer pings by themselves, so a page that is only listening stays connected.
    public var webSocketPingSeconds: Int
    public var webSocketHangupSeconds: Int
    /// Headers added to every response that does not set them itself (`standardSecurityHeaders`).
    public var securityHeaders: [String: String]
    /// Seconds a client may take to send its headers or its body, or to accept the response: slow clients
    /// (slowloris) are disconnected after it (for a request head lws counts it from the start, not per read,
    /// so trickling a header line now and then does not extend it).
    public var requestTimeoutSeconds: Int
    /// Seconds an idle keep-alive connection is kept open between requests.
    public var keepAliveSeconds: Int
    /// Seconds a handler may take before its client is disconnected (the handler itself runs to the end).
    public var handlerTimeoutSeconds: Int
    /// Largest accepted WebSocket message; a larger one closes the connection with 1009 (message too big).
    public var maxWebSocketMessageBytes: Int
    /// Bytes a WebSocket may have queued for a client that does not read; past it the connection is closed.
    public var maxWebSocketBacklogBytes: Int

    /// What every response carries unless it says otherwise: a content security policy matching the page's
    /// own (everything from this server, nothing inline, no framing), no MIME sniffing, no framing by other
    /// sites, and no `Referer` leaving the page.
    public static let standardSecurityHeaders: [String: String] = [
        "content-security-policy": "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' blob: data:; "
            + "media-src 'self' blob:; connect-src 'self' ws: wss:; object-src 'none'; base-uri 'none'; form-action 'self'; "
            + "frame-ancestors 'none'",
        "x-content-type-options": "nosniff",
        "x-frame-options": "DENY",
        "referrer-policy": "no-referrer",
    ]

    public init(host: String? = "127.0.0.1", port: Int = 8080, tls: TLS? = nil, maxBodyBytes: Int = 1 << 20,
                maxHeaderBytes: Int = 8 << 10, maxConnections: Int = 128, maxConnectionsPerAddress: Int = 32,
                reservedConnections: Int = 16, maxWebSocketsPerAddress: Int = 16, requestTimeoutSeconds: Int = 10,
                keepAliveSeconds: Int = 15, handlerTimeoutSeconds: Int = 120,
                maxWebSocketMessageBytes: Int = 1 << 20, maxWebSocketBacklogBytes: Int = 16 << 20,
                webSocketPingSeconds: Int = 5, webSocketHangupSeconds: Int = 10,
                securityHeaders: [String: String] = ServerConfiguration.standardSecurityHeaders) {
        self.host = host
        self.port = port
        self.tls = tls
        self.maxBodyBytes = maxBodyBytes
        self.maxHeaderBytes = maxHeaderBytes
        self.maxConnections = maxConnections
        self.maxConnectionsPerAddress = maxConnectionsPerAddress
        self.reservedConnections = reservedConnections
        self.maxWebSocketsPerAddress = maxWebSocketsPerAddress
        self.webSocketPingSeconds = webSocketPingSeconds
        self.webSocketHangupSeconds = webSocketHangupSeconds
        self.securityHeaders = Dictionary(securityHeaders.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { _, last in last })
        self.requestTimeoutSeconds = requestTimeoutSeconds
        self.keepAliveSeconds = keepAliveSeconds
        self.handlerTimeoutSeconds = handlerTimeoutSeconds
        self.maxWebSocketMessageBytes = maxWebSocketMessageBytes
        self.maxWebSocketBacklogBytes = maxWebSocketBacklogBytes
    }

    /// Checks the values before libwebsockets sees them; the message names the field and the allowed range.
    func validate() throws(ServerError) {
        func check(_ ok: Bool, _ message: String) throws(ServerError) {
            if !ok { throw ServerError(function: "ServerConfiguration", code: 0, message: message) }
        }
        try check((0...65535).contains(port), "port \(port) is outside 0...65535")
        try check(maxBodyBytes >= 0, "maxBodyBytes \(maxBodyBytes) is negative")
        try check((1024...32767).contains(maxHeaderBytes), "maxHeaderBytes \(maxHeaderBytes) is outside 1024...32767")
        try check(maxConnections >= 1, "maxConnections \(maxConnections) must be at least 1")
        try check(maxConnectionsPerAddress >= 1, "maxConnectionsPerAddress \(maxConnectionsPerAddress) must be at least 1")
        try check((0..<maxConnections).contains(reservedConnections),
                  "reservedConnections \(reservedConnections) must be 0...\(maxConnections - 1) (below maxConnections)")
        try check(maxWebSocketsPerAddress >= 1, "maxWebSocketsPerAddress \(maxWebSocketsPerAddress) must be at least 1")
        try check((0...3600).contains(webSocketPingSeconds), "webSocketPingSeconds \(webSocketPingSeconds) is outside 0...3600 (0 = no pings)")
        try check(webSocketPingSeconds == 0 || (webSocketPingSeconds + 1...7200).contains(webSocketHangupSeconds),
                  "webSocketHangupSeconds \(webSocketHangupSeconds) must be more than webSocketPingSeconds (\(webSocketPingSeconds)) and at most 7200")
        try check(requestTimeoutSeconds >= 1, "requestTimeoutSeconds \(requestTimeoutSeconds) must be at least 1")
        try check(keepAliveSeconds >= 1, "keepAliveSeconds \(keepAliveSeconds) must be at least 1")
        try check(handlerTimeoutSeconds >= 1, "handlerTimeoutSeconds \(handlerTimeoutSeconds) must be at least 1")
        try check(maxWebSocketMessageBytes >= 1, "maxWebSocketMessageBytes must be at least 1")
        try check(maxWebSocketBacklogBytes >= 1, "maxWebSocketBacklogBytes must be at least 1")
        if let tls {
            for (what, url) in [("certificate", tls.certificate), ("private key", tls.privateKey)] {
                try check(FileManager.default.isReadableFile(atPath: url.path),
                          "the TLS \(what) \(url.path) does not exist or is not readable")
            }
        }
    }
}
