import Foundation
import HarkAppliance
import HarkAudio
import Synchronization

/// The appliance itself as a member of a room of its own server (kind `appliance`, id `Rooms.applianceID`):
/// its microphone, echo cancelled against what its speaker played, is one more input of the room's mix, and
/// the mix-minus the mixer makes for it is played on its speaker. No socket and no Opus: the mixing thread
/// takes its audio from a PCM queue (`LocalAudio`) and hands its mix back the same way, so it is mixed, limited
/// and reported (speaking, level) like any member, and hears everyone but itself.
///
/// Joined by configuration (`rooms.join`), by voice (the dialog's `room` action) or from the page
/// (`POST /rooms/{id}/appliance`); the join and leave are the rooms' usual `member:joined`/`member:left`.
///
/// Thread-safe: the voice loop calls `exchange` every 100 ms; the dialog and the API join and leave from
/// their own threads.
public final class ApplianceMember: RoomPresence {
    /// The microphone may run this far ahead of the room's clock before `exchange` waits for the mixer: a real
    /// microphone never does, but a file read as a microphone (an ALSA file plugin on a null device, as the
    /// tests use) delivers as fast as it is read, and the room plays in real time.
    public static let maximumAheadSamples = RoomAudio.sampleRate * 3 / 10
    /// How long one `exchange` waits at most for the room to catch up.
    static let maximumWait = 0.2

    public let audio: RoomAudio
    public var rooms: Rooms { audio.rooms }
    /// Whether the microphone goes through the echo canceller (on unless configured off).
    public let echoCancellation: Bool

    struct State {
        var room: String?
        var channel: AudioChannel?
        var echo = EchoPath(cancelling: false)
    }

    private let state = Mutex(State())

    /// Makes the appliance a possible member of `audio`'s rooms: `RoomsAPI`'s `POST /rooms/{id}/appliance` finds it
    /// there.
    public init(audio: RoomAudio, echoCancellation: Bool = true) {
        self.audio = audio
        self.echoCancellation = echoCancellation
        audio.install(self)
    }

    public var currentRoom: (id: String, name: String)? {
        guard let id = state.withLock({ $0.room }), rooms.isJoined(Rooms.applianceID, in: id), let room = rooms.room(id) else { return nil }
        return (id, room.displayName)
    }

    // MARK: Joining and leaving

    public func join(named name: String, said: String?, text: String?) -> RoomOutcome {
        let open: [Room]
        do { open = try rooms.openRooms() } catch { return RoomOutcome(.failed, asked: name, message: error.message) }
        guard let room = Self.match(name, text: text, in: open) ?? said.flatMap({ Self.match($0, text: nil, in: open) }) else {
            let asked = [said ?? "", name].first { !$0.isEmpty }
            return RoomOutcome(.noRoom, asked: asked, message: asked.map { "there is no open room called \"\($0)\"" } ?? "no open room was named")
        }
        return join(room: room)
    }

    /// Joins the room with this id (the page's "bring the appliance in").
    public func join(roomID: String) throws(RoomsError) -> RoomOutcome {
        guard let room = rooms.room(roomID) else { throw RoomsError(.notFound, "no room \"\(roomID)\"") }
        try Rooms.requireOpen(room)
        let outcome = join(room: room)
        if outcome.status == .failed { throw RoomsError(.storage, outcome.message) }
        return outcome
    }

    /// Joins the open room called `displayName`, making it (created by the appliance) when there is none: the
    /// configuration's `rooms.join` at start.
    public func joinOrCreate(displayName: String) throws(RoomsError) -> RoomOutcome {
        let open = try rooms.openRooms()
        if let room = Self.match(displayName, text: nil, in: open) { return join(room: room) }
        let room = try rooms.create(displayName: displayName, creator: Rooms.applianceID)
        return join(room: room)
    }

    private func join(room: Room) -> RoomOutcome {
        if currentRoom?.id == room.id {
            return RoomOutcome(.already, room: room.displayName, roomID: room.id, message: "already in \(room.displayName)")
        }
        if currentRoom != nil { _ = leave() }
        do {
            try rooms.join(room: room.id, member: Rooms.applianceID)
        } catch {
            return RoomOutcome(.failed, room: room.displayName, roomID: room.id, message: error.message)
        }
        let channel = audio.attachLocal(room: room.id, member: Rooms.applianceID)
        let cancelling = echoCancellation
        state.withLock { s in
            // A new room is a new echo path: the canceller starts afresh (made here, so it never leaves the lock).
            s = State(room: room.id, channel: channel, echo: EchoPath(cancelling: cancelling))
        }
        return RoomOutcome(.joined, room: room.displayName, roomID: room.id, message: "joined \(room.displayName)")
    }

    public func leave() -> RoomOutcome {
        let (id, channel) = state.withLock { s -> (String?, AudioChannel?) in
            defer { s = State() }
            return (s.room, s.channel)
        }
        // Leave first, then take the audio out: detaching a member's last channel would otherwise leave for it.
        defer { if let channel { audio.detach(channel) } }
        guard let id, let room = rooms.room(id) else { return RoomOutcome(.notInRoom, message: "not in a room") }
        guard rooms.isJoined(Rooms.applianceID, in: id) else {
            return RoomOutcome(.notInRoom, message: "not in a room (\(room.displayName) was left or closed)")
        }
        do { try rooms.leave(room: id, member: Rooms.applianceID) } catch {
            return RoomOutcome(.failed, room: room.displayName, roomID: id, message: error.message)
        }
        return RoomOutcome(.left, room: room.displayName, roomID: id, message: "left \(room.displayName)")
    }

    // MARK: Audio

    public func exchange(microphone: PCMBuffer) -> RoomExchange {
        let speech = PCMFormat(sampleRate: RoomAudio.sampleRate, channels: 1)
        guard microphone.format == speech, let local = state.withLock({ $0.channel?.local }) else {
            return RoomExchange(microphone: microphone, mix: PCMBuffer(format: speech))
        }
        let cleaned = state.withLock { $0.echo.clean(microphone) }
        local.put(cleaned)
        // Held to the room's clock: wait while the microphone is far ahead of what the mixer has taken.
        let deadline = Date().addingTimeInterval(Self.maximumWait)
        while local.inboundSamples > Self.maximumAheadSamples, !local.isCut, Date() < deadline {
            Thread.sleep(forTimeInterval: 0.005)
        }
        let output = local.takeOutput()
        let mix = state.withLock { $0.echo.play(output) }
        return RoomExchange(microphone: PCMBuffer(format: speech, samples: cleaned), mix: PCMBuffer(format: speech, samples: mix))
    }

    // MARK: Matching a spoken room name

    /// The open room `name` names — its display name, compared without case, punctuation or a leading "the" —
    /// or else the one whose display name is said within `text` (the longest such, so "living room" wins
    /// over "room"); nil when none is.
    static func match(_ name: String, text: String?, in rooms: [Room]) -> Room? {
        match(name, text: text, in: rooms, displayName: \.displayName)
    }

    /// The same over any list that has display names (another server's `GET /rooms`).
    static func match<R>(_ name: String, text: String?, in rooms: [R], displayName: (R) -> String) -> R? {
        let asked = words(name)
        if !asked.isEmpty, let room = rooms.first(where: { words(displayName($0)) == asked }) { return room }
        guard let text else { return nil }
        let said = words(text)
        var best: (room: R, length: Int)?
        for room in rooms {
            let target = words(displayName(room))
            guard !target.isEmpty, target.count <= said.count else { continue }
            let found = (0...(said.count - target.count)).contains { Array(said[$0..<($0 + target.count)]) == target }
            if found, target.count > (best?.length ?? 0) { best = (room, target.count) }
        }
        return best?.room
    }

    /// Lowercased words, punctuation dropped, without "the".
    static func words(_ text: String) -> [String] {
        let cleaned = text.lowercased().unicodeScalars.map { CharacterSet.alphanumerics.contains($0) ? Character($0) : " " }
        return String(cleaned).split(separator: " ").map(String.init).filter { $0 != "the" }
    }
}
