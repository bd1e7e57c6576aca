import CSQLite
import Foundation

/// Where a turn came from.
public enum TurnSource: String, Sendable, CaseIterable {
    /// The wake phrase, then speech.
    case voice
    /// The push-to-talk button, then speech.
    case button
    /// Typed at `hark chat` or the console.
    case console
    /// The web page or the message API.
    case web
    /// The wake phrase, then speech, in a drop-in room member's stream (docs/rooms.md).
    case room
}

/// How a turn ended: what was heard, understood and answered. Every field but `accepted` may be missing
/// (nothing recognised, no intent, no reply).
public struct TurnOutcome: Sendable, Equatable {
    /// What the recognizer heard (or the text typed).
    public var transcript: String?
    /// The recognizer's acoustic confidence in `transcript`, 0…1; `nil` for typed input.
    public var acousticConfidence: Double?
    /// The top intent.
    public var intent: String?
    /// The matcher's confidence in `intent`, 0…1.
    public var confidence: Double?
    /// What the appliance answered.
    public var reply: String?
    /// Whether the appliance acted on it (`false`: rejected as not understood or not confident enough).
    public var accepted: Bool

    public init(transcript: String? = nil, acousticConfidence: Double? = nil, intent: String? = nil, confidence: Double? = nil,
                reply: String? = nil, accepted: Bool) {
        self.transcript = transcript
        self.acousticConfidence = acousticConfidence
        self.intent = intent
        self.confidence = confidence
        self.reply = reply
        self.accepted = accepted
    }
}

/// One exchange with the user, from trigger to reply: a row of the `turns` table.
public struct Turn: Sendable, Equatable {
    public var id: Int64
    public var started: Date
    public var source: TurnSource
    /// When `finishTurn` recorded the outcome; `nil` for a turn still running, or cut short by a crash.
    public var finished: Date?
    /// `nil` until the turn is finished.
    public var outcome: TurnOutcome?
}

extension EventStore {
    /// Starts a turn and returns its id, for the `turn` of the events that belong to it. Committed at once, or with
    /// the open batch (`beginBatch`).
    public func beginTurn(source: TurnSource, at time: Date = Date()) throws(SQLiteError) -> Int64 {
        try changing { () throws(SQLiteError) -> Int64 in
            try statement("INSERT INTO turns (started, source) VALUES (?, ?)")
                .run([.integer(ApplianceEvent.milliseconds(time)), .text(source.rawValue)])
            return connection.lastInsertRowID
        }
    }

    /// Records how turn `id` ended. Finishing it again replaces the outcome; an unknown id is an error.
    public func finishTurn(_ id: Int64, outcome: TurnOutcome, at time: Date = Date()) throws(SQLiteError) {
        let path = url.path
        try changing { () throws(SQLiteError) in
            try statement("""
                UPDATE turns SET finished = ?, transcript = ?, acoustic_confidence = ?, intent = ?, confidence = ?, reply = ?, accepted = ?
                WHERE id = ?
                """).run([.integer(ApplianceEvent.milliseconds(time)), SQLiteValue(outcome.transcript), SQLiteValue(outcome.acousticConfidence),
                          SQLiteValue(outcome.intent), SQLiteValue(outcome.confidence), SQLiteValue(outcome.reply),
                          .integer(outcome.accepted ? 1 : 0), .integer(id)])
            guard connection.changes == 1 else {
                throw SQLiteError(function: "EventStore.finishTurn", code: SQLITE_NOTFOUND, message: "no turn \(id)", path: path)
            }
        }
    }

    /// Turn `id`, or `nil` when there is none.
    public func turn(id: Int64) throws(SQLiteError) -> Turn? {
        try turns(where: " WHERE id = ?", [.integer(id)]).first
    }

    /// The newest `limit` turns (all when `nil`) started at or after `since`, oldest first.
    public func turns(since: Date? = nil, limit: Int? = nil) throws(SQLiteError) -> [Turn] {
        let filter = since == nil ? "" : " WHERE started >= ?"
        let values: [SQLiteValue] = since.map { [.integer(ApplianceEvent.milliseconds($0))] } ?? []
        return try turns(where: filter + " ORDER BY id DESC LIMIT \(limit.map { max(0, $0) } ?? -1)", values).reversed()
    }

    private func turns(where clause: String, _ values: [SQLiteValue]) throws(SQLiteError) -> [Turn] {
        let path = url.path
        return try locked { () throws(SQLiteError) -> [Turn] in
            let sql = "SELECT id, started, source, finished, transcript, acoustic_confidence, intent, confidence, reply, accepted FROM turns" + clause
            return try connection.prepare(sql).rows(values) { (row) throws(SQLiteError) -> Turn in
                let id = row.int64(at: 0) ?? 0
                guard let raw = row.text(at: 2), let source = TurnSource(rawValue: raw) else {
                    throw SQLiteError(function: "EventStore.turns", code: SQLITE_MISMATCH,
                                      message: "turn \(id): unknown source \"\(row.text(at: 2) ?? "NULL")\"", path: path)
                }
                let finished = row.int64(at: 3).map(ApplianceEvent.date(milliseconds:))
                let outcome = finished == nil ? nil : TurnOutcome(
                    transcript: row.text(at: 4), acousticConfidence: row.double(at: 5), intent: row.text(at: 6),
                    confidence: row.double(at: 7), reply: row.text(at: 8), accepted: (row.int64(at: 9) ?? 0) != 0)
                return Turn(id: id, started: ApplianceEvent.date(milliseconds: row.int64(at: 1) ?? 0), source: source,
                            finished: finished, outcome: outcome)
            }
        }
    }
}
