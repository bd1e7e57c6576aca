import HarkAppliance
import HarkRooms

extension CompanionAPI {
    /// Why the wake phrase cannot be listened for in this server's rooms.
    public enum MemberWakeUnavailable: Error, Sendable, CustomStringConvertible {
        case noRooms
        /// The command after the phrase needs the push-to-talk recogniser, and there is none.
        case noRecognizer
        /// The spotter could not be made (its model or settings).
        case spotter(String)

        public var description: String {
            switch self {
            case .noRooms: "this server has no rooms"
            case .noRecognizer: "there is no speech recogniser (PocketSphinx model missing)"
            case .spotter(let reason): reason
            }
        }
    }

    /// Listens for the wake phrase in every person member's stream in this server's rooms (docs/rooms.md, "The
    /// wake phrase in a room"), with spotters made by `makeSpotter` (the microphone's: the same settings) and
    /// the push-to-talk recogniser for the command after it.
    public func listenForWakePhraseInRooms(
        limits: MemberWakeGate.Limits = MemberWakeGate.Limits(), command: MemberWake.Listening,
        makeSpotter: () throws -> any WakeDetector
    ) throws(MemberWakeUnavailable) -> MemberWake {
        guard let roomAudio else { throw .noRooms }
        guard let listening else { throw .noRecognizer }
        let rooms = roomAudio.rooms
        let gate = MemberWakeGate(limits: limits, isPerson: { key in rooms.isPerson(key.member, in: key.room) })
        let wake: MemberWake
        do {
            wake = try MemberWake(gate: gate, audio: roomAudio, turns: turns, recognizers: listening, listening: command, makeSpotter: makeSpotter)
        } catch {
            throw .spotter("\(error)")
        }
        roomAudio.setMemberTap(gate)
        return wake
    }
}
