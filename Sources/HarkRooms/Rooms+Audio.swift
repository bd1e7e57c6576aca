import Foundation
import HarkCore

extension Rooms {
    /// What the audio path reports for one member's microphone, every block it mixes: `level` (0…1, clamped)
    /// and whether the member is speaking. The room's joined members hear `audio:speaking:on`/`off` when
    /// `speaking` changes, and `audio:level` at most once per `levelInterval` per member; other calls send
    /// nothing. Reads and writes memory only, so it is cheap enough for the mixing thread.
    /// - Returns: the events sent (none for a member that is not joined).
    @discardableResult
    public func reportAudio(room: String, member: String, level: Double, speaking: Bool) -> [RoomEvent] {
        let t = clock()
        let clamped = level.isFinite ? min(1, max(0, level)) : 0
        let interval = Self.levelInterval.timeInterval
        let (events, recipients) = state.withLock { s -> ([RoomEvent], [String]) in
            guard s.members[room]?[member] == .joined else { return ([], []) }
            let entry = RoomMember(id: member, name: "", kind: member == Self.applianceID ? .appliance : .person, state: .joined, speaking: speaking)
            var audio = s.audio[room]?[member] ?? Audio()
            var events: [RoomEvent] = []
            if audio.speaking != speaking {
                audio.speaking = speaking
                events.append(RoomEvent(kind: speaking ? .speakingOn : .speakingOff, room: room, time: t, member: entry))
            }
            if audio.lastLevel.map({ t.timeIntervalSince($0) >= interval - 0.000_5 }) ?? true {
                audio.lastLevel = t
                events.append(RoomEvent(kind: .level, room: room, time: t, member: entry, level: clamped))
            }
            s.audio[room, default: [:]][member] = audio
            return (events, s.joined(in: room))
        }
        deliver(events, to: recipients)
        return events
    }
}
