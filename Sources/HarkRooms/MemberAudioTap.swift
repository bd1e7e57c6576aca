/// Something that wants each person member's decoded audio as the mixing thread makes it (the wake phrase
/// spotted in a member's stream, `MemberWakeGate`).
///
/// Called on the mixing thread, so an implementation must never block, wait for a slow lock, allocate much
/// or do real work: copy what it needs and hand it off. The appliance's own member (in process) is never
/// passed: its microphone has the appliance's own listeners.
public protocol MemberAudioTap: Sendable {
    /// One member's 20 ms block (16 kHz mono), decoded or concealed, with the mixer's speaking state for it
    /// (the energy detector, docs/rooms.md); called once per tick for each socket member that has audio.
    func mixed(room: String, member: String, block: [Int16], speaking: Bool)
    /// The tick is over: every member with audio this tick has been passed.
    func endOfTick()
}

extension RoomAudio {
    /// Gives every person member's decoded audio to `tap` from the next tick on (nil: to nobody).
    public func setMemberTap(_ tap: (any MemberAudioTap)?) {
        memberTap.withLock { $0 = tap }
    }

    /// The tap for this tick (one lock per tick, not per member).
    var currentMemberTap: (any MemberAudioTap)? { memberTap.withLock { $0 } }
}

extension Rooms {
    /// Whether `member` of `room` is a person, not an appliance (this one, or another one's linked over the network,
    /// whose microphone its own appliance listens to). From memory.
    public func isPerson(_ member: String, in room: String) -> Bool {
        entry(room: room, member: member, state: .joined).kind == .person
    }
}
