/// The server side of one WebSocket: the router's factory makes one per accepted upgrade.
///
/// The server calls these methods one at a time, in order (`opened`, any number of `received`, then `closed`
/// exactly once), on a queue of that connection's own — never on the network thread — so they may block
/// briefly; a long task should still move elsewhere so later messages are not held up.
public protocol WebSocketHandler: Sendable {
    /// The upgrade completed; keep `connection` to send and to close.
    func opened(_ connection: WebSocketConnection)
    /// A whole text message (fragments already joined), valid UTF-8.
    func received(text: String)
    /// A whole binary message.
    func received(binary: [UInt8])
    /// The connection is gone (closed by either side, or the client vanished); sends now do nothing.
    func closed()
}

extension WebSocketHandler {
    public func received(text: String) {}
    public func received(binary: [UInt8]) {}
    public func closed() {}
}
