import Foundation

extension EventStore {
    /// A subscription to new events; hand it to `unsubscribe(_:)` to stop.
    public struct Subscription: Hashable, Sendable {
        let id: UInt64
    }

    /// Calls `handler` with every event appended from now on, in id order.
    ///
    /// Handlers run one at a time on the store's private serial queue, never on the appending thread: a
    /// slow subscriber (a WebSocket to a phone on bad Wi-Fi) never holds up the voice loop, and a handler
    /// may itself read from or append to the store without deadlocking. Events appended by other processes
    /// sharing the file are not seen; poll `events(afterID:)` for those.
    public func subscribe(_ handler: @escaping @Sendable (StoredEvent) -> Void) -> Subscription {
        subscriberLock.withLock {
            let id = nextSubscriberID
            nextSubscriberID += 1
            subscribers[id] = handler
            return Subscription(id: id)
        }
    }

    /// Stops a subscription. Events already queued for it are dropped, so nothing arrives after this returns
    /// unless a delivery to it is running at that very moment.
    public func unsubscribe(_ subscription: Subscription) {
        _ = subscriberLock.withLock { subscribers.removeValue(forKey: subscription.id) }
    }

    /// Queues `event` for the subscribers (called by `append` under the store lock, so the queue is in id order).
    func notifySubscribers(_ event: StoredEvent) {
        guard subscriberLock.withLock({ !subscribers.isEmpty }) else { return }
        delivery.async { [self] in
            // The handlers are looked up at delivery time, so an unsubscribed handler gets nothing more.
            let handlers = subscriberLock.withLock { subscribers.sorted { $0.key < $1.key }.map(\.value) }
            for handler in handlers { handler(event) }
        }
    }

    /// Returns once every event appended so far has been delivered to the subscribers.
    func waitForSubscribers() {
        delivery.sync {}
    }
}
