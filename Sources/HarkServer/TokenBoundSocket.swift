import Dispatch
import HarkHTTP
import Synchronization

/// A WebSocket handler that lives only as long as the token it was opened with: every `checkInterval` the
/// token is verified again, and once it has expired or been revoked (logout) the socket is closed with
/// 4401 and the reason, as a refused upgrade would have been. Everything else goes to the wrapped handler.
final class TokenBoundSocket: WebSocketHandler {
    let inner: any WebSocketHandler
    private let check: @Sendable () -> String?
    private let interval: Duration
    private let timer = Mutex<RepeatingTimer?>(nil)

    /// - Parameter check: nil while the token is good, else why it is not (run on a timer queue).
    init(_ inner: any WebSocketHandler, checkInterval: Duration, check: @escaping @Sendable () -> String?) {
        self.inner = inner
        self.check = check
        self.interval = checkInterval
    }

    func opened(_ connection: WebSocketConnection) {
        let check = check
        let source = RepeatingTimer(label: "hark.websocket.token", interval: interval) { [weak connection] in
            guard let connection, connection.isOpen else { return }
            if let reason = check() { connection.close(code: 4401, reason: reason) }
        }
        timer.withLock { $0 = source }
        inner.opened(connection)
    }

    func received(text: String) { inner.received(text: text) }
    func received(binary: [UInt8]) { inner.received(binary: binary) }

    func closed() {
        timer.withLock { source in
            source?.cancel()
            source = nil
        }
        inner.closed()
    }
}
