import Dispatch
import HarkCore
import HarkHTTP
import Synchronization

/// Closes a listen socket that has gone quiet or stayed too long (`ListenLimits`), from a timer of its
/// own: the socket's handler queue may be busy recognising, and a silent client sends nothing to react to.
final class ListenWatchdog: Sendable {
    private struct State {
        var opened = ContinuousClock.now
        var lastMessage = ContinuousClock.now
        var timer: RepeatingTimer?
    }

    private let state = Mutex(State())

    /// Starts watching; checks about ten times per idle timeout.
    func start(connection: WebSocketConnection, limits: ListenLimits) {
        let step = limits.idleTimeout / 10
        let source = RepeatingTimer(label: "hark.listen.watchdog", interval: step) { [weak self, weak connection] in
            guard let self, let connection, connection.isOpen else { return }
            let (opened, last) = self.state.withLock { ($0.opened, $0.lastMessage) }
            let now = ContinuousClock.now
            if now - last >= limits.idleTimeout {
                connection.close(code: 1008, reason: "nothing received for \(Int(limits.idleTimeout.timeInterval)) s: the turn was abandoned")
            } else if now - opened >= limits.maximumSession {
                connection.close(code: 1008, reason: "a listen socket stays open at most \(Int(limits.maximumSession.timeInterval)) s")
            }
        }
        state.withLock { state in
            state.opened = .now
            state.lastMessage = .now
            state.timer = source
        }
    }

    /// A message arrived.
    func touch() {
        state.withLock { $0.lastMessage = .now }
    }

    func stop() {
        state.withLock { state in
            state.timer?.cancel()
            state.timer = nil
        }
    }
}
