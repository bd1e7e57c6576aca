import Foundation
import HarkAppliance
import HarkCore
import Synchronization

/// The drop-in rooms: people and the names they picked, rooms, memberships (invited / joined / left), and
/// the events members of a room hear about each other. Rooms persist in SQLite (`RoomStore`); a room
/// nobody has been joined to for `idleClose` closes.
///
/// Built for the audio path to hang off: the questions a mixer asks every few milliseconds —
/// `isJoined(_:in:)`, `joinedMembers(of:)` — and `reportAudio(room:member:level:speaking:)` read an in-memory
/// copy under a mutex of its own and never wait on SQLite. Changes (create, join, leave, delete) take the
/// database's mutex, write through to the file, then update the copy, so they are serialized and their
/// events go out in order.
///
/// Thread-safe: every stored property is immutable or a `Mutex`.
public final class Rooms: Sendable {
    /// A room nobody has been joined to for this long closes.
    public static let defaultIdleClose: Duration = .seconds(3600)
    /// The member id of the appliance itself.
    public static let applianceID = "appliance"
    /// At most this many characters in a room's `display_name`.
    public static let maximumDisplayNameLength = 100
    /// At most this many characters in a person's `name`.
    public static let maximumNameLength = 64
    /// A member's level goes out at most once per interval (10 per second).
    public static let levelInterval: Duration = .milliseconds(100)
    /// At most this many names per paired device: each `POST /auth` with a new name makes a person, and
    /// a device must not be able to grow the database without end.
    public static let maximumPeoplePerDevice = 32
    /// At most this many open rooms per creator, for the same reason.
    public static let maximumOpenRoomsPerCreator = 20
    /// Closed rooms are kept this long (so their ids answer 410, not 404), then forgotten at the next start.
    public static let closedRoomMemory: TimeInterval = 30 * 24 * 3600

    /// A handle to stop hearing room events (`unsubscribe`).
    public struct Subscription: Sendable, Hashable {
        let member: String
        let id: UInt64
    }

    /// The in-memory copy of the database, plus who is speaking.
    struct State {
        var people: [String: RoomStore.Person]
        var rooms: [String: Room]
        var members: [String: [String: RoomMember.State]]
        /// room id → member id → what the audio path last said.
        var audio: [String: [String: Audio]] = [:]
    }

    struct Audio {
        var speaking = false
        var lastLevel: Date?
    }

    struct Subscribers {
        var next: UInt64 = 1
        var byMember: [String: [UInt64: @Sendable (RoomEvent) -> Void]] = [:]
    }

    public let idleClose: Duration
    /// The appliance's name as members see it.
    public let applianceName: String
    /// The database file.
    public let database: URL
    private let now: @Sendable () -> Date
    private let store: Mutex<RoomStore>
    let state: Mutex<State>
    private let subscribers = Mutex(Subscribers())

    /// Opens (creating if need be) the rooms database at `database` (normally `<data>/rooms.sqlite3`).
    /// - Parameters:
    ///   - idleClose: how long a room may have nobody joined before it closes.
    ///   - applianceName: the name the appliance has as a member.
    ///   - now: the clock, for tests.
    public init(database: URL, idleClose: Duration = Rooms.defaultIdleClose, applianceName: String = "Hark",
                now: @escaping @Sendable () -> Date = { Date() }) throws(RoomsError) {
        guard idleClose > .zero else { throw RoomsError(.badInput(field: "idleClose"), "the idle time before a room closes must be positive, got \(idleClose)") }
        let store = try RoomStore(url: database)
        let contents = try store.load(now: now(), forgetClosedAfter: Self.closedRoomMemory)
        self.database = database
        self.idleClose = idleClose
        self.applianceName = applianceName
        self.now = now
        self.store = Mutex(store)
        self.state = Mutex(State(people: contents.people, rooms: contents.rooms, members: contents.members))
    }

    /// Now, to the millisecond, as the database keeps it (so what is read back after a restart is equal).
    func clock() -> Date {
        Date(timeIntervalSince1970: Double(ApplianceEvent.milliseconds(now())) / 1000)
    }

    // MARK: People

    /// Sets the name of a person, making a new person (with a new id) when `person` is nil — unless the
    /// device already has a person of that name, who is then the one meant (picking "Ada" again on Ada's
    /// phone is Ada, not a second Ada). 409 past `maximumPeoplePerDevice`.
    /// - Parameter device: the subject of the paired device's token the person picked the name on.
    /// - Returns: the person's id.
    public func setName(_ rawName: String, person: String?, device: String, kind: RoomMember.Kind = .person) throws(RoomsError) -> String {
        let name = try Self.checkText(rawName, field: "name", maximum: Self.maximumNameLength)
        let t = clock()
        return try store.withLock { (store) throws(RoomsError) -> String in
            let (existing, count) = state.withLock { s in
                let mine = s.people.values.filter { $0.device == device }
                return (mine.first { $0.name == name }?.id, mine.count)
            }
            if person == nil && existing == nil && count >= Self.maximumPeoplePerDevice {
                throw RoomsError(.conflict, "this device already has \(count) names, the most it may have")
            }
            let id = person ?? existing ?? Self.randomID()
            try store.write { db throws(SQLiteError) in
                try db.prepare("""
                    INSERT INTO people (id, name, device, created, updated, kind) VALUES (?, ?, ?, ?, ?, ?)
                    ON CONFLICT (id) DO UPDATE SET name = excluded.name, updated = excluded.updated, kind = excluded.kind
                    """).run([.text(id), .text(name), .text(device), .integer(RoomStore.ms(t)), .integer(RoomStore.ms(t)), .text(kind.rawValue)])
            }
            state.withLock { s in
                let device = s.people[id]?.device ?? device
                s.people[id] = RoomStore.Person(id: id, name: name, device: device, kind: kind)
            }
            return id
        }
    }

    /// The name a person picked, nil for an unknown id.
    public func name(of person: String) -> String? {
        state.withLock { $0.people[person]?.name }
    }

    // MARK: Rooms

    /// The open rooms, oldest first.
    public func openRooms() throws(RoomsError) -> [Room] {
        try closeIdleRooms()
        return state.withLock { s in s.rooms.values.filter(\.isOpen).sorted { $0.sequence < $1.sequence } }
    }

    /// The room with this id, open or closed; nil if there never was one (or it was forgotten).
    public func room(_ id: String) -> Room? {
        state.withLock { $0.rooms[id] }
    }

    /// Makes a room; nobody is in it yet (the idle clock starts now).
    public func create(displayName rawName: String, creator: String) throws(RoomsError) -> Room {
        let displayName = try Self.checkText(rawName, field: "display_name", maximum: Self.maximumDisplayNameLength)
        // The appliance may make the room its configuration names (`rooms.join`); only people make others.
        if creator != Self.applianceID { try requirePerson(creator) }
        try closeIdleRooms()
        let t = clock()
        var room = Room(id: Self.randomID(), displayName: displayName, creator: creator, created: t, idleSince: t)
        return try store.withLock { (store) throws(RoomsError) -> Room in
            let open = state.withLock { s in s.rooms.values.filter { $0.isOpen && $0.creator == creator }.count }
            guard open < Self.maximumOpenRoomsPerCreator else {
                throw RoomsError(.conflict, "you have \(open) open rooms, the most one person may have: delete one first")
            }
            try store.write { db throws(SQLiteError) in
                try db.prepare("INSERT INTO rooms (id, display_name, creator, created, idle_since) VALUES (?, ?, ?, ?, ?)")
                    .run([.text(room.id), .text(displayName), .text(creator), .integer(RoomStore.ms(t)), .integer(RoomStore.ms(t))])
                room.sequence = db.lastInsertRowID
            }
            state.withLock { [room] in $0.rooms[room.id] = room }
            return room
        }
    }

    /// Puts `member` (a person id, or `Rooms.applianceID`) in the room. Joining again is no change and no event.
    /// Members of the room hear `member:joined`, the newcomer included.
    @discardableResult
    public func join(room id: String, member: String) throws(RoomsError) -> RoomMember {
        try closeIdleRooms()
        if member != Self.applianceID { try requirePerson(member) }
        return try change(room: id, member: member, to: .joined)
    }

    /// Marks `member` as having been asked to join (the cloud model's `invited`): listed, but not in the
    /// room, so it neither hears its events nor keeps it open.
    @discardableResult
    public func invite(room id: String, member: String) throws(RoomsError) -> RoomMember {
        try closeIdleRooms()
        if member != Self.applianceID { try requirePerson(member) }
        return try change(room: id, member: member, to: .invited)
    }

    /// Takes `member` out of the room (409 if it never joined; leaving again is no change and no event).
    /// Those who were in it, the leaver included, hear `member:left`; when the last one leaves, the idle
    /// clock starts.
    @discardableResult
    public func leave(room id: String, member: String) throws(RoomsError) -> RoomMember {
        try closeIdleRooms()
        return try change(room: id, member: member, to: .left)
    }

    private func change(room id: String, member: String, to newState: RoomMember.State) throws(RoomsError) -> RoomMember {
        let t = clock()
        return try store.withLock { (store) throws(RoomsError) -> RoomMember in
            let (room, old, joined) = state.withLock { s in (s.rooms[id], s.members[id]?[member], s.joined(in: id)) }
            guard let room else { throw RoomsError(.notFound, "no room \"\(id)\"") }
            try Self.requireOpen(room)
            // Leaving again is no change, like joining again: a repeated request (a retry, or the engine running
            // a bodyless POST's handler twice) must not turn a done leave into an error.
            if newState == .left && old != .joined && old != .left {
                throw RoomsError(.conflict, "\(member == Self.applianceID ? "the appliance has" : "you have") not joined room \"\(id)\"")
            }
            if old == newState || (newState == .invited && old == .joined) { return entry(room: id, member: member, state: old ?? newState) }
            let othersJoined = joined.filter { $0 != member }
            // nil while someone is joined; from now when the last one leaves; unchanged otherwise.
            let idleSince: Date? = newState == .joined ? nil : (othersJoined.isEmpty ? (room.idleSince ?? t) : nil)
            let kind: RoomMember.Kind = member == Self.applianceID ? .appliance : state.withLock { $0.people[member]?.kind ?? .person }
            try store.write { db throws(SQLiteError) in
                try db.prepare("""
                    INSERT INTO members (room, member, kind, state, changed) VALUES (?, ?, ?, ?, ?)
                    ON CONFLICT (room, member) DO UPDATE SET state = excluded.state, changed = excluded.changed
                    """).run([.text(id), .text(member), .text(kind.rawValue), .text(newState.rawValue), .integer(RoomStore.ms(t))])
                try db.prepare("UPDATE rooms SET idle_since = ? WHERE id = ?").run([SQLiteValue(idleSince.map(RoomStore.ms)), .text(id)])
            }
            state.withLock { s in
                s.members[id, default: [:]][member] = newState
                s.rooms[id]?.idleSince = idleSince
                if newState != .joined { s.audio[id]?[member] = nil }
            }
            let updated = entry(room: id, member: member, state: newState)
            switch newState {
            case .joined: deliver([RoomEvent(kind: .memberJoined, room: id, time: t, member: updated)], to: othersJoined + [member])
            case .left: deliver([RoomEvent(kind: .memberLeft, room: id, time: t, member: updated)], to: joined)
            case .invited: break
            }
            return updated
        }
    }

    /// Every member the room has had (joined, invited and left), sorted by id.
    public func members(of id: String) throws(RoomsError) -> [RoomMember] {
        try closeIdleRooms()
        let (room, members) = state.withLock { s in (s.rooms[id], s.members[id] ?? [:]) }
        guard let room else { throw RoomsError(.notFound, "no room \"\(id)\"") }
        try Self.requireOpen(room)
        return members.keys.sorted().map { entry(room: id, member: $0, state: members[$0] ?? .left) }
    }

    /// Closes the room for good, if `person` created it (403 otherwise; an already closed room stays as it
    /// is). Its joined members hear `room:closed` and are marked as having left.
    public func delete(room id: String, by person: String) throws(RoomsError) {
        try closeIdleRooms()
        let t = clock()
        try store.withLock { (store) throws(RoomsError) in
            let (room, joined) = state.withLock { s in (s.rooms[id], s.joined(in: id)) }
            guard let room else { throw RoomsError(.notFound, "no room \"\(id)\"") }
            guard room.creator == person else {
                throw RoomsError(.forbidden, "only the room's creator (\(name(of: room.creator) ?? room.creator)) may delete room \"\(id)\"")
            }
            // Deleting a closed room again is no change: DELETE is idempotent, so a retry is not an error.
            if !room.isOpen { return }
            try close(room: id, reason: .deleted, at: t, store: store)
            deliver([RoomEvent(kind: .roomClosed, room: id, time: t)], to: joined)
        }
    }

    /// Closes every open room that has had nobody joined for `idleClose`. Runs before every change and
    /// listing, so no caller ever sees a room that should have closed.
    public func closeIdleRooms() throws(RoomsError) {
        let t = clock()
        let limit = idleClose.timeInterval
        let due = state.withLock { s in
            s.rooms.values.filter { room in room.isOpen && room.idleSince.map { t.timeIntervalSince($0) >= limit } == true }.map(\.id)
        }
        if due.isEmpty { return }
        try store.withLock { (store) throws(RoomsError) in
            for id in due { try close(room: id, reason: .idle, at: t, store: store) }
        }
    }

    /// Marks the room closed and its joined members left; called holding `store`'s lock.
    private func close(room id: String, reason: Room.ClosedReason, at t: Date, store: RoomStore) throws(RoomsError) {
        try store.write { db throws(SQLiteError) in
            try db.prepare("UPDATE rooms SET closed = ?, closed_reason = ?, idle_since = NULL WHERE id = ? AND closed IS NULL")
                .run([.integer(RoomStore.ms(t)), .text(reason.rawValue), .text(id)])
            try db.prepare("UPDATE members SET state = 'left', changed = ? WHERE room = ? AND state = 'joined'").run([.integer(RoomStore.ms(t)), .text(id)])
        }
        state.withLock { s in
            s.rooms[id]?.closed = t
            s.rooms[id]?.closedReason = reason
            s.rooms[id]?.idleSince = nil
            for (member, memberState) in s.members[id] ?? [:] where memberState == .joined { s.members[id]?[member] = .left }
            s.audio[id] = nil
        }
    }

    // MARK: Lookups for the audio path (memory only)

    /// Whether `member` is joined to the room now.
    public func isJoined(_ member: String, in room: String) -> Bool {
        state.withLock { $0.members[room]?[member] == .joined }
    }

    /// The ids of the room's joined members, sorted.
    public func joinedMembers(of room: String) -> [String] {
        state.withLock { $0.joined(in: room) }
    }

    // MARK: Events

    /// Calls `handler` with every event of every room `member` is joined to, on the thread that caused it.
    /// The handler must not call back into `Rooms` (changes hold the database's lock while they deliver).
    public func subscribe(member: String, _ handler: @escaping @Sendable (RoomEvent) -> Void) -> Subscription {
        subscribers.withLock { s in
            let id = s.next
            s.next += 1
            s.byMember[member, default: [:]][id] = handler
            return Subscription(member: member, id: id)
        }
    }

    public func unsubscribe(_ subscription: Subscription) {
        subscribers.withLock { s in
            s.byMember[subscription.member]?[subscription.id] = nil
            if s.byMember[subscription.member]?.isEmpty == true { s.byMember[subscription.member] = nil }
        }
    }

    /// Hands `events` to the subscribers of `members` (in order), outside the subscribers' lock.
    func deliver(_ events: [RoomEvent], to members: [String]) {
        guard !events.isEmpty, !members.isEmpty else { return }
        let handlers = subscribers.withLock { s in members.flatMap { s.byMember[$0].map { Array($0.values) } ?? [] } }
        for event in events {
            for handler in handlers { handler(event) }
        }
    }

    // MARK: Helpers

    func entry(room: String, member: String, state memberState: RoomMember.State) -> RoomMember {
        state.withLock { s in
            let isAppliance = member == Self.applianceID
            return RoomMember(id: member, name: isAppliance ? applianceName : (s.people[member]?.name ?? member),
                              kind: isAppliance ? .appliance : (s.people[member]?.kind ?? .person), state: memberState,
                              speaking: memberState == .joined && s.audio[room]?[member]?.speaking == true)
        }
    }

    private func requirePerson(_ person: String) throws(RoomsError) {
        guard state.withLock({ $0.people[person] != nil }) else {
            throw RoomsError(.forbidden, "rooms need a name: POST /auth {\"name\"} with this device's token first")
        }
    }

    static func requireOpen(_ room: Room) throws(RoomsError) {
        guard let closed = room.closed else { return }
        let when = ApplianceEvent.iso8601(closed)
        switch room.closedReason ?? .idle {
        case .deleted: throw RoomsError(.closed, "room \"\(room.id)\" (\(room.displayName)) was deleted by its creator at \(when)")
        case .idle: throw RoomsError(.closed, "room \"\(room.id)\" (\(room.displayName)) closed at \(when): nobody had joined it for a while")
        }
    }

    /// `text` trimmed, if it is 1…`maximum` characters without control characters; else a 400 naming `field`.
    static func checkText(_ text: String, field: String, maximum: Int) throws(RoomsError) -> String {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else { throw RoomsError(.badInput(field: field), "\(field) must not be empty") }
        guard trimmed.count <= maximum else {
            throw RoomsError(.badInput(field: field), "\(field) is \(trimmed.count) characters; at most \(maximum) are allowed")
        }
        guard !trimmed.unicodeScalars.contains(where: { CharacterSet.controlCharacters.contains($0) }) else {
            throw RoomsError(.badInput(field: field), "\(field) must not contain control characters")
        }
        return trimmed
    }

    /// 64 random bits as 16 hex digits (`SystemRandomNumberGenerator` reads the kernel's getrandom).
    static func randomID() -> String {
        let value = UInt64.random(in: .min ... .max)
        let hex = String(value, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}

extension Rooms.State {
    /// The joined members of a room, sorted.
    func joined(in room: String) -> [String] {
        (members[room] ?? [:]).filter { $0.value == .joined }.map(\.key).sorted()
    }
}
