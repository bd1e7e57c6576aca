/// A router factory's answer to a WebSocket upgrade request.
public enum WebSocketUpgrade: Sendable {
    /// Upgrade, and hand the connection to this handler.
    case accept(any WebSocketHandler)
    /// Answer with this response instead (e.g. 401 before the upgrade) and do not upgrade. Over HTTP/2 the
    /// stream has been accepted before the router is asked, so the socket opens and closes at once with code
    /// 4000 + the status (4401, 4404) and the error message as the reason.
    case refuse(HTTPResponse)
}
