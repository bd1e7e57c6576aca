import Foundation
import Synchronization

/// An HTTP/1.1 (and, over TLS, HTTP/2) and WebSocket server on libwebsockets.
///
/// `init` binds the port (so `port` is known before `start`); `start` runs `lws_service` on a thread of its
/// own; each handler runs on a dispatch queue of its own and its response goes back to that thread. `stop` closes
/// WebSockets with 1001, gives in-flight requests up to two seconds, closes everything and joins the thread.
public final class HTTPServer: Sendable {
    private enum Phase {
        case created
        case running(finished: DispatchSemaphore)
        case stopped
    }

    private let engine: LWSServer
    private let phase = Mutex(Phase.created)

    /// The port the server is bound to (the configured one, or the one chosen for port 0).
    public var port: Int { engine.port }
    /// The configuration it was made with.
    public var configuration: ServerConfiguration { engine.configuration }

    /// See `LWSServer.logContextIsOwn`.
    var logContextIsOwn: Int32? { engine.logContextIsOwn }

    /// Binds the listening socket (and loads the certificate, for TLS). Throws when the configuration is out
    /// of range, the address is not local, the port is taken, or the certificate or key cannot be used.
    public init(configuration: ServerConfiguration, router: Router) throws(ServerError) {
        engine = try LWSServer(configuration: configuration, router: router)
    }

    deinit {
        stop()
    }

    /// Starts serving on a new thread; does nothing if already started or stopped.
    public func start() {
        phase.withLock { phase in
            guard case .created = phase else { return }
            let finished = DispatchSemaphore(value: 0)
            let engine = engine
            let thread = Thread {
                engine.serve()
                finished.signal()
            }
            thread.name = "hark.http.service"
            thread.start()
            phase = .running(finished: finished)
        }
    }

    /// Stops serving and waits for the service thread to finish; safe to call more than once, from any thread
    /// except a handler's own (which the stop would wait for).
    public func stop() {
        let finished: DispatchSemaphore? = phase.withLock { phase in
            defer { phase = .stopped }
            switch phase {
            case .created:
                engine.destroyUnstarted()
                return nil
            case .running(let finished):
                return finished
            case .stopped:
                return nil
            }
        }
        guard let finished else { return }
        engine.wakeup.requestStop()
        // The loop sleeps until an event: nudge it until it has seen its stop deadline pass.
        while finished.wait(timeout: .now() + .milliseconds(100)) == .timedOut {
            engine.wakeup.kick()
        }
    }
}
