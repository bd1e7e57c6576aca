/// A router factory's answer to a WebSocket upgrade request.
public enum WebSocketUpgrade: Sendable {
    /// Upgrade, and hand the connection to this handler.
    case accept(any WebSocketHandler)
    /// Answer with this response instead (e.g. 401 before the upgrade) and do not upgrade.
    case refuse(HTTPResponse)
}
