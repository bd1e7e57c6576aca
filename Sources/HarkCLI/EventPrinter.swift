import Foundation
import HarkAppliance
import HarkCore

/// How `hark run` shows its events: JSON lines on stdout (`--events`), or one readable line each on
/// stderr — which journald keeps as the service's log, with a syslog priority prefix when it is journald
/// that is listening (`JOURNAL_STREAM` set).
final class EventPrinter: Sendable {
    let json: Bool
    let interactive: Bool
    let journald = ProcessInfo.processInfo.environment["JOURNAL_STREAM"] != nil

    init(json: Bool, interactive: Bool) {
        self.json = json
        self.interactive = interactive
    }

    func print(_ event: ApplianceEvent, id: Int64?) {
        if json {
            let object = id.map { StoredEvent(id: $0, event: event).json } ?? event.json
            Output.line(JSONValue.object(object).serialized())
            return
        }
        let kind = event.kind.rawValue
        let turn = event.turn.map { "turn \($0) " } ?? ""
        let priority = journald ? (event.kind == .error ? "<3>" : event.kind == .reply || event.kind == .start ? "<5>" : "<6>") : ""
        if interactive && event.kind == .reply {
            // The conversation itself goes to the terminal's stdout, like `hark chat`.
            Output.line("hark: \(event.text)")
            return
        }
        // Every kind is at most 10 letters: padded to line the texts up (Foundation's padding(toLength:) went
        // through NSString, a visible share of a /message turn under load).
        let padded = kind + String(repeating: " ", count: max(0, 10 - kind.count))
        printError("\(priority)\(padded) \(turn)\(event.text)")
    }
}
