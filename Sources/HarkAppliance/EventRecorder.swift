import Foundation
import HarkCore

/// Where every event goes: into the store (a turn's rows committed together when it ends, or within
/// `EventStore.batchMaxDelay`, so a crash mid-turn keeps what happened until just before it), then handed to
/// `report` (stdout `--events`, journald lines, the web's live socket). Shared by the loop, the turns it runs
/// and the server, from any thread.
public final class EventRecorder: Sendable {
    public let store: EventStore?
    let report: @Sendable (ApplianceEvent, Int64?) -> Void

    public init(store: EventStore?, report: @escaping @Sendable (ApplianceEvent, Int64?) -> Void) {
        self.store = store
        self.report = report
        store?.onDeferredCommitFailure { error in
            report(ApplianceEvent(kind: .error, text: "event store: events of the last \(EventStore.batchMaxDelayMilliseconds) ms were not saved: \(error)"), nil)
        }
    }

    /// Stores `event` and reports it with its id.
    @discardableResult
    public func record(_ event: ApplianceEvent) -> Int64? {
        var id: Int64?
        if let store {
            do { id = try store.append(event) } catch {
                report(ApplianceEvent(kind: .error, text: "event store: \(error)", turn: event.turn), nil)
            }
        }
        report(event, id)
        return id
    }

    public func record(_ kind: ApplianceEvent.Kind, _ text: String, _ data: JSONObject = JSONObject(), turn: Int64? = nil) {
        record(ApplianceEvent(kind: kind, text: text, turn: turn, data: data))
    }

    /// Reports an event another part already stored (the picture store logs its pictures), as stored.
    public func announce(_ event: ApplianceEvent) {
        if let store, let stored = try? store.latestEvents(limit: 1, kinds: [event.kind]).last, stored.event.turn == event.turn {
            report(stored.event, stored.id)
        } else {
            report(event, nil)
        }
    }

    /// Starts a turn's row and its batch: every `beginTurn` must be followed by one `finishTurn`.
    func beginTurn(source: TurnSource) -> Int64? {
        guard let store else { return nil }
        store.beginBatch()
        do { return try store.beginTurn(source: source) } catch {
            report(ApplianceEvent(kind: .error, text: "event store: \(error)"), nil)
            return nil
        }
    }

    /// Records how the turn ended and commits its batch (even when its row could not be written).
    func finishTurn(_ id: Int64?, _ outcome: TurnOutcome) {
        guard let store else { return }
        if let id {
            do { try store.finishTurn(id, outcome: outcome) } catch {
                report(ApplianceEvent(kind: .error, text: "event store: \(error)", turn: id), nil)
            }
        }
        do { try store.endBatch() } catch {
            report(ApplianceEvent(kind: .error, text: "event store: turn \(id.map(String.init) ?? "?") was not saved: \(error)", turn: id), nil)
        }
    }
}
