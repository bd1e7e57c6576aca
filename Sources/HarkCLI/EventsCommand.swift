import Foundation
import HarkAppliance
import HarkCore

/// `hark events`: print the appliance's event log from its SQLite store, read-only.
enum EventsCommand: Command {
    static let name = "events"
    static let abstract = "Print the appliance's event log (wakes, transcripts, replies, actions)"
    static let usage = """
        USAGE: hark events [--data DIR] [--since TIME] [--kind KIND[,KIND...]] [--limit N] [--json]

        Prints the events recorded by the appliance, oldest first, one per line in local time:
          2026-11-30 05:40:12.123  turn 3  reply       Light is on
        The store is opened read-only; nothing is created.
          --data DIR       the data directory (default $HARK_DATA, else $XDG_DATA_HOME/hark, else
                           ~/.local/share/hark); the log is DIR/events.sqlite3
          --since TIME     only events at or after TIME: an age (90s, 10m, 2h, 1d, 1w) or ISO 8601
                           (2026-11-30, 2026-11-30 05:00 local, 2026-11-30T05:00:00Z)
          --kind KINDS     only these kinds: \(ApplianceEvent.Kind.allCases.map(\.rawValue).joined(separator: ", "))
          --limit N        only the newest N events (still printed oldest first)
          --json           one JSON object per line: {"id","time","kind","turn","text",...data}
        """

    static func run(_ args: inout Arguments) throws -> Int32 {
        let data = try args.option("--data")
        let sinceText = try args.option("--since")
        let kindsText = try args.option("--kind")
        let limit = try args.option("--limit", parse: { Int($0).flatMap { $0 > 0 ? $0 : nil } }, expected: "a positive whole number")
        let json = try args.flag("--json")
        try args.finish()

        var since: Date?
        if let sinceText {
            guard let date = EventStore.parseSince(sinceText) else {
                throw UsageError(message: "--since: expected an age like 10m, 2h, 1d or an ISO 8601 time like 2026-11-30T05:00:00Z, got \"\(sinceText)\"")
            }
            since = date
        }
        let kinds = try kindsText.map(parseKinds)

        let directory = data.map { DataDirectory(url: URL(fileURLWithPath: $0, isDirectory: true)) } ?? DataDirectory.default
        let file = directory.eventStoreURL
        guard FileManager.default.fileExists(atPath: file.path) else {
            throw CommandFailure(message: "no event store at \(file.path) (the appliance creates it when it first runs; --data chooses another directory)",
                                 exitCode: 66)
        }
        let events: [StoredEvent]
        do throws(SQLiteError) {
            let store = try EventStore(path: file, access: .readOnly)
            if let limit {
                events = try store.latestEvents(limit: limit, since: since, kinds: kinds)
            } else {
                events = try store.events(since: since, kinds: kinds)
            }
        } catch {
            throw CommandFailure(message: error.description, exitCode: error.isBadData ? 65 : 1)
        }

        if json {
            for stored in events { Output.line(JSONValue.object(stored.json).serialized()) }
            return 0
        }
        // One width for the turn column over the whole listing, so the kinds and texts line up.
        let turnWidth = events.compactMap(\.event.turn).map { String($0).count }.max() ?? 0
        let kindWidth = ApplianceEvent.Kind.allCases.map(\.rawValue.count).max() ?? 0
        for stored in events {
            let event = stored.event
            var line = ApplianceEvent.localTimestamp(event.time) + "  "
            if turnWidth > 0 {
                let turn = event.turn.map(String.init) ?? ""
                line += (turn.isEmpty ? "     " : "turn ") + String(repeating: " ", count: turnWidth - turn.count) + turn + "  "
            }
            line += event.kind.rawValue.padding(toLength: kindWidth, withPad: " ", startingAt: 0) + "  "
            // One event, one line: a reply with a newline must not look like two events.
            line += event.text.replacingOccurrences(of: "\n", with: "\\n")
            Output.line(line)
        }
        return 0
    }

    /// `reply,action` → the kinds; an unknown name is a usage error listing the known ones.
    static func parseKinds(_ text: String) throws(UsageError) -> Set<ApplianceEvent.Kind> {
        var kinds: Set<ApplianceEvent.Kind> = []
        for name in text.split(separator: ",", omittingEmptySubsequences: false) {
            let trimmed = name.trimmingCharacters(in: .whitespaces)
            guard let kind = ApplianceEvent.Kind(rawValue: trimmed) else {
                throw UsageError(message: "--kind: unknown kind \"\(trimmed)\" (kinds: \(ApplianceEvent.Kind.allCases.map(\.rawValue).joined(separator: ", ")))")
            }
            kinds.insert(kind)
        }
        return kinds
    }
}
