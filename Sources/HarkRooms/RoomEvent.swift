import Foundation
import HarkAppliance
import HarkCore

/// Something that happened in a room, sent on the events WebSocket to the room's joined members only. Room
/// events are not written to the event log: levels come ten times a second per speaker, and who is in a room
/// is the rooms database's business.
public struct RoomEvent: Sendable, Equatable {
    public enum Kind: String, Sendable {
        case memberJoined = "member:joined"
        case memberLeft = "member:left"
        case speakingOn = "audio:speaking:on"
        case speakingOff = "audio:speaking:off"
        /// A member's input level, 0…1, at most every `Rooms.levelInterval`.
        case level = "audio:level"
        /// The room was deleted by its creator while these members were in it.
        case roomClosed = "room:closed"
    }

    public var kind: Kind
    public var room: String
    public var time: Date
    /// The member it is about: the whole entry for joins and leaves, the id for audio events.
    public var member: RoomMember?
    public var level: Double?

    /// `{"kind", "time", "room", "member", "level"?}`: `member` is the member object for `member:*`, the
    /// member's id for `audio:*`; no `id`, since room events are not in the log and are not replayed.
    public var json: JSONObject {
        var o = JSONObject([("kind", .string(kind.rawValue)), ("time", .string(ApplianceEvent.iso8601(time))), ("room", .string(room))])
        if let member {
            switch kind {
            case .memberJoined, .memberLeft: o["member"] = member.json
            default: o["member"] = .string(member.id)
            }
        }
        if let level { o["level"] = .number(level) }
        return o
    }
}
