import Foundation
import HarkCore

/// One thing the appliance did or noticed: a wake, a transcript, a reply, a switched light, a saved picture.
///
/// Events are what `hark events` prints, what journald gets (`text`) and what the web API streams (`json`).
/// A value: build it, hand it to `EventStore.append(_:)`, which gives it an id.
public struct ApplianceEvent: Sendable, Equatable {
    /// What kind of thing happened. The raw values are the strings stored and printed.
    public enum Kind: String, Sendable, CaseIterable {
        /// The wake phrase was heard or the button pressed.
        case wake
        /// The microphone is open for a command.
        case listening
        /// Speech was recognised: `data` holds `transcript`, `acoustic_confidence`, `snr_db` (the utterance's
        /// estimated signal-to-noise ratio) and `noisy_decoding`.
        case transcript
        /// The matcher's result: `data` holds `intents` (name + confidence) and `accepted`.
        case intent
        /// What the appliance said.
        case reply
        /// A device action from the dialog: `data` holds `name`, `command` and `result`.
        case action
        /// A device changed state: `data` holds `name` and `state`.
        case device
        /// A picture was saved: `data` holds `picture` (its id) and `path`; `shared` when the turn got a picture
        /// another request took at the same time (`CaptureRounds`).
        case picture
        /// Something failed: `text` says what.
        case error
        /// The loop changed state (idle, listening, understanding, speaking).
        case state
        /// The appliance started.
        case start
        /// The appliance stopped.
        case stop
        /// Who tried to get in: a pairing or login (successful or failed), a lockout, pairing codes voided
        /// after too many wrong ones, a logout or revoked token. `data` holds `outcome`, `method`, `client` and,
        /// when known, `subject` and `token_id`.
        case auth
    }

    /// The envelope members of `json`; a `data` member with one of these names is left out of `json`.
    public static let envelopeKeys: Set<String> = ["id", "time", "kind", "turn", "text"]

    public var kind: Kind
    /// When it happened. Stored to the millisecond, so `init` rounds it to the millisecond already: an event
    /// read back from the store equals the one appended.
    public var time: Date
    /// The turn it belongs to (`EventStore.beginTurn(source:)`), `nil` for events outside a turn.
    public var turn: Int64?
    /// One human line, e.g. "Light is on".
    public var text: String
    /// The structured details, merged into `json` after the envelope.
    public var data: JSONObject

    public init(kind: Kind, text: String, turn: Int64? = nil, data: JSONObject = JSONObject(), time: Date = Date()) {
        self.kind = kind
        self.text = text
        self.turn = turn
        self.data = data
        self.time = Self.date(milliseconds: Self.milliseconds(time))
    }

    /// `{"time", "kind", "turn", "text", …data}`: the event before it has an id (see `StoredEvent.json`).
    public var json: JSONObject { json(id: nil) }

    func json(id: Int64?) -> JSONObject {
        var object = JSONObject()
        if let id { object["id"] = .number(Double(id)) }
        object["time"] = .string(Self.iso8601(time))
        object["kind"] = .string(kind.rawValue)
        object["turn"] = turn.map { .number(Double($0)) } ?? .null
        object["text"] = .string(text)
        for (key, value) in data.pairs where !Self.envelopeKeys.contains(key) { object[key] = value }
        return object
    }

    /// Milliseconds since 1970 UTC, rounded to the nearest: the store's time unit. Rounding (not truncating)
    /// makes `date(milliseconds:)` → `milliseconds(_:)` exact despite binary floating point.
    public static func milliseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded())
    }

    /// The date of `milliseconds` since 1970 UTC.
    public static func date(milliseconds: Int64) -> Date {
        Date(timeIntervalSince1970: Double(milliseconds) / 1000)
    }

    /// ISO 8601 in UTC with milliseconds: `2026-11-30T05:40:12.123Z`.
    public static func iso8601(_ date: Date) -> String {
        let (fields, millisecond) = brokenDown(date, local: false)
        return String(format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", fields.tm_year + 1900, fields.tm_mon + 1, fields.tm_mday,
                      fields.tm_hour, fields.tm_min, fields.tm_sec, millisecond)
    }

    /// `2026-11-30 05:40:12.123` in the process's local time zone (`TZ`): how `hark events` shows times.
    public static func localTimestamp(_ date: Date) -> String {
        let (fields, millisecond) = brokenDown(date, local: true)
        return String(format: "%04d-%02d-%02d %02d:%02d:%02d.%03d", fields.tm_year + 1900, fields.tm_mon + 1, fields.tm_mday,
                      fields.tm_hour, fields.tm_min, fields.tm_sec, millisecond)
    }

    /// Calendar fields of `date` in UTC or in the process's local time zone (`TZ`), plus the millisecond.
    /// The C functions are `gmtime_r` and `localtime_r`: exact, thread-safe and free of formatter state.
    static func brokenDown(_ date: Date, local: Bool) -> (tm, Int32) {
        var (seconds, millisecond) = milliseconds(date).quotientAndRemainder(dividingBy: 1000)
        if millisecond < 0 {
            seconds -= 1
            millisecond += 1000
        }
        var time = time_t(seconds)
        var fields = tm()
        if local {
            localtime_r(&time, &fields)
        } else {
            gmtime_r(&time, &fields)
        }
        return (fields, Int32(millisecond))
    }
}

/// An event as stored: its id (increasing in commit order, never reused) and the event.
public struct StoredEvent: Sendable, Equatable {
    public var id: Int64
    public var event: ApplianceEvent

    public init(id: Int64, event: ApplianceEvent) {
        self.id = id
        self.event = event
    }

    /// One JSON object, `{"id", "time", "kind", "turn", "text", …data}`: a `hark events --json` line and the
    /// web API's event. `time` is ISO 8601 UTC with milliseconds; `turn` is `null` outside a turn.
    public var json: JSONObject { event.json(id: id) }
}
