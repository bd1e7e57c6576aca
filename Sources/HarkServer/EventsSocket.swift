import Foundation
import HarkAppliance
import HarkCore
import HarkHTTP
import HarkRooms

/// `WS /api/events`: the stored events after `since` first (a reconnecting page misses nothing), then every
/// new one as it is stored, each as the JSON `hark events --json` prints, in id order without repeats. A
/// person's socket (a token from `POST /auth`) also gets the events of the rooms they are joined to
/// (`RoomEvent`: `member:joined`, `audio:level`, …), live only: they have no id and are not replayed.
final class EventsSocket: WebSocketHandler, @unchecked Sendable {
    // @unchecked: `state` is only touched with `lock` held; the store and rooms are Sendable.
    /// Whose room events this socket carries.
    struct RoomEvents {
        var rooms: Rooms
        var member: String
    }

    private struct State {
        var connection: WebSocketConnection?
        var subscription: EventStore.Subscription?
        var roomSubscription: Rooms.Subscription?
        var lastSent: Int64
        /// Live events that arrived while the replay was being sent.
        var pending: [StoredEvent] = []
        var replaying = true
    }

    let store: EventStore
    let rooms: RoomEvents?
    private let lock = NSLock()
    private var state: State

    init(store: EventStore, since: Int64?, rooms: RoomEvents? = nil) {
        self.store = store
        self.rooms = rooms
        state = State(lastSent: since ?? Int64.max)
    }

    func opened(_ connection: WebSocketConnection) {
        // Subscribe first, then replay: an event stored in between arrives both ways and is sent once.
        let subscription = store.subscribe { [weak self] event in self?.live(event) }
        let roomSubscription = rooms.map { r in r.rooms.subscribe(member: r.member) { [weak self] event in self?.room(event) } }
        lock.lock()
        state.connection = connection
        state.subscription = subscription
        state.roomSubscription = roomSubscription
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

    private func room(_ event: RoomEvent) {
        lock.lock()
        defer { lock.unlock() }
        _ = state.connection?.send(text: JSONValue.object(event.json).serialized())
    }

    func closed() {
        lock.lock()
        let subscription = state.subscription
        let roomSubscription = state.roomSubscription
        state.subscription = nil
        state.roomSubscription = nil
        state.connection = nil
        lock.unlock()
        if let subscription { store.unsubscribe(subscription) }
        if let roomSubscription { rooms?.rooms.unsubscribe(roomSubscription) }
    }
}
