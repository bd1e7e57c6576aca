import Foundation
import HarkCore

/// A drop-in room: a name people see, who made it, and whether it is still open. Rooms close when nobody
/// has been joined for `Rooms.idleClose`, or when their creator deletes them; a closed room's id never
/// opens again (joining it is 410, so a stale link says what happened instead of "not found").
public struct Room: Sendable, Equatable {
    /// Why a room closed.
    public enum ClosedReason: String, Sendable {
        /// Nobody was joined for the idle time.
        case idle
        /// Its creator deleted it.
        case deleted
    }

    /// Random, 16 lowercase hex digits.
    public var id: String
    public var displayName: String
    /// The person id of whoever created it: only they may delete it.
    public var creator: String
    public var created: Date
    /// Since when nobody has been joined (the creation time until someone joins); nil while someone is.
    public var idleSince: Date?
    public var closed: Date?
    public var closedReason: ClosedReason?
    /// Creation order (the database's rowid): rooms made in the same millisecond still list in order.
    var sequence: Int64 = 0

    public var isOpen: Bool { closed == nil }

    /// `{"id", "display_name"}`, as `GET /rooms` lists it.
    public var json: JSONValue { ["id": .string(id), "display_name": .string(displayName)] }
}

/// Someone's membership of one room, as `GET /rooms/{id}/members` shows it.
public struct RoomMember: Sendable, Equatable {
    /// A person on a phone, or the appliance itself (its microphone and speaker, once room audio exists).
    public enum Kind: String, Sendable {
        case person
        case appliance
    }

    /// The cloud model's states: asked to come, in the room, or gone again.
    public enum State: String, Sendable {
        case invited
        case joined
        case left
    }

    /// A person id, or `Rooms.applianceID`.
    public var id: String
    /// The name the person picked (`POST /auth`), or the appliance's.
    public var name: String
    public var kind: Kind
    public var state: State
    /// Whether the audio path last reported this member speaking (`Rooms.reportAudio`); never stored.
    public var speaking: Bool

    /// `{"id", "name", "kind", "state", "speaking"}`.
    public var json: JSONValue {
        ["id": .string(id), "name": .string(name), "kind": .string(kind.rawValue), "state": .string(state.rawValue), "speaking": .bool(speaking)]
    }
}
