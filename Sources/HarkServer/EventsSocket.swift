import Foundation
import HarkAppliance
import HarkCore
import HarkHTTP

/// `WS /api/events`: the stored events after `since` first (a reconnecting page misses nothing), then every
/// new one as it is stored, each as the JSON `hark events --json` prints, in id order without repeats.
final class EventsSocket: WebSocketHandler, @unchecked Sendable {
    // @unchecked: `state` is only touched with `lock` held; the store is Sendable.
    private struct State {
        var connection: WebSocketConnection?
        var subscription: EventStore.Subscription?
        var lastSent: Int64
        /// Live events that arrived while the replay was being sent.
        var pending: [StoredEvent] = []
        var replaying = true
    }

    let store: EventStore
    private let lock = NSLock()
    private var state: State

    init(store: EventStore, since: Int64?) {
        self.store = store
        state = State(lastSent: since ?? Int64.max)
    }

    func opened(_ connection: WebSocketConnection) {
        // Subscribe first, then replay: an event stored in between arrives both ways and is sent once.
        let subscription = store.subscribe { [weak self] event in self?.live(event) }
        lock.lock()
        state.connection = connection
        state.subscription = subscription
        let since = state.lastSent
        lock.unlock()
        var replay: [StoredEvent] = []
        if since != Int64.max {
            do { replay = try store.events(afterID: since, limit: 10_000) } catch {
                _ = connection.send(text: JSONValue.object(["error": ["code": "internal", "message": .string("event store: \(error)")]]).serialized())
            }
        }
        lock.lock()
        if since == Int64.max { state.lastSent = (try? store.lastEventID()) ?? 0 }
        let toSend = (replay + state.pending).sorted { $0.id < $1.id }
        state.pending.removeAll()
        state.replaying = false
        for event in toSend where event.id > state.lastSent {
            _ = connection.send(text: JSONValue.object(event.json).serialized())
            state.lastSent = event.id
        }
        lock.unlock()
    }

    private func live(_ event: StoredEvent) {
        lock.lock()
        defer { lock.unlock() }
        if state.replaying {
            state.pending.append(event)
            return
        }
        guard event.id > state.lastSent, let connection = state.connection else { return }
        _ = connection.send(text: JSONValue.object(event.json).serialized())
        state.lastSent = event.id
    }

    func closed() {
        lock.lock()
        let subscription = state.subscription
        state.subscription = nil
        state.connection = nil
        lock.unlock()
        if let subscription { store.unsubscribe(subscription) }
    }
}
