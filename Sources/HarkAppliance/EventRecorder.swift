import Foundation
import HarkCore

/// Where every event goes: committed to the store at once (a crash mid-turn keeps what happened so far),
/// then handed to `report` (stdout `--events`, journald lines, the web's live socket). Shared by the loop,
/// the turns it runs and the server, from any thread.
public final class EventRecorder: Sendable {
    public let store: EventStore?
    let report: @Sendable (ApplianceEvent, Int64?) -> Void

    public init(store: EventStore?, report: @escaping @Sendable (ApplianceEvent, Int64?) -> Void) {
        self.store = store
        self.report = report
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

    func beginTurn(source: TurnSource) -> Int64? {
        guard let store else { return nil }
        do { return try store.beginTurn(source: source) } catch {
            report(ApplianceEvent(kind: .error, text: "event store: \(error)"), nil)
            return nil
        }
    }

    func finishTurn(_ id: Int64?, _ outcome: TurnOutcome) {
        guard let store, let id else { return }
        do { try store.finishTurn(id, outcome: outcome) } catch {
            report(ApplianceEvent(kind: .error, text: "event store: \(error)", turn: id), nil)
        }
    }
}
