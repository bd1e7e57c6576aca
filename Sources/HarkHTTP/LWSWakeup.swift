import CWebsockets
import Synchronization

/// The one door from other threads into the service thread: handlers post responses, WebSocket connections
/// ask to write, `stop()` asks to stop; each then wakes `lws_service` with `lws_cancel_service`, and the
/// service thread collects everything in `LWS_CALLBACK_EVENT_WAIT_CANCELLED`.
final class LWSWakeup: Sendable {
    struct Pending {
        var responses: [(serial: UInt64, response: HTTPResponse)] = []
        var writable: Set<UInt64> = []
        /// WebSockets whose handler has caught up: read from them again (`lws_rx_flow_control`).
        var resume: Set<UInt64> = []
        var stop = false
    }

    private struct State {
        /// The `struct lws_context *` as an address (a plain value can cross threads); cleared under the lock
        /// before the context is destroyed, so no thread wakes a freed context.
        var context: UInt = 0
        var pending = Pending()
    }

    private let state = Mutex(State())

    /// Makes wake-ups reach `context` (a `struct lws_context *`).
    func attach(_ context: OpaquePointer) {
        let address = UInt(bitPattern: context)
        state.withLock { $0.context = address }
    }

    /// Stops all wake-ups: called on the service thread just before `lws_context_destroy`.
    func detach() {
        state.withLock { $0.context = 0 }
    }

    /// A handler's response for the request numbered `serial`.
    func post(_ response: HTTPResponse, to serial: UInt64) {
        wake { $0.responses.append((serial, response)) }
    }

    /// The WebSocket numbered `serial` has something to send or wants to close.
    func requestWrite(_ serial: UInt64) {
        wake { $0.writable.insert(serial) }
    }

    /// The WebSocket numbered `serial` may be read from again.
    func requestResume(_ serial: UInt64) {
        wake { $0.resume.insert(serial) }
    }

    /// Asks the service loop to close its connections and finish.
    func requestStop() {
        wake { $0.stop = true }
    }

    /// Wakes the service loop without news, so it re-checks its stop deadline.
    func kick() {
        wake { _ in }
    }

    /// Everything posted since the last call (service thread).
    func take() -> Pending {
        state.withLock { state in
            let pending = state.pending
            state.pending = Pending()
            state.pending.stop = pending.stop
            return pending
        }
    }

    private func wake(_ change: (inout Pending) -> Void) {
        state.withLock { state in
            change(&state.pending)
            // lws_cancel_service only writes to the context's event pipe: safe from any thread, and cheap
            // enough to do under the lock that keeps the context alive.
            if let context = OpaquePointer(bitPattern: state.context) { lws_cancel_service(context) }
        }
    }
}
