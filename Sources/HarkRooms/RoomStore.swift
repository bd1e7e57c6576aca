import Foundation
import HarkAppliance

/// The rooms database (`rooms.sqlite3` in the data directory, its own file so the rooms app owns its schema):
/// people and the names they picked, rooms, and who is a member of which in what state. Times are
/// milliseconds since 1970 UTC, as in the event store.
///
/// Not `Sendable`: `Rooms` keeps it inside a mutex, so statements never interleave.
final class RoomStore {
    /// What the database held when it was opened: everything `Rooms` keeps in memory.
    struct Contents {
        var people: [String: Person] = [:]
        var rooms: [String: Room] = [:]
        /// room id → member id → state.
        var members: [String: [String: RoomMember.State]] = [:]
    }

    /// A person: the name picked on a paired device (`POST /auth`), and that device's token subject.
    struct Person: Sendable, Equatable {
        var id: String
        var name: String
        var device: String
        /// `appliance` for another Hark appliance that joins this server's rooms over the network (it says so
        /// when it picks its name), else `person`.
        var kind: RoomMember.Kind = .person
    }

    /// `migrations[n]` takes the database from schema `n` to `n + 1`. Append, never edit.
    static let migrations: [String] = [
        """
        CREATE TABLE people (
            id TEXT PRIMARY KEY,
            name TEXT NOT NULL,
            device TEXT NOT NULL,
            created INTEGER NOT NULL,
            updated INTEGER NOT NULL
        );
        CREATE TABLE rooms (
            id TEXT PRIMARY KEY,
            display_name TEXT NOT NULL,
            creator TEXT NOT NULL,
            created INTEGER NOT NULL,
            idle_since INTEGER,
            closed INTEGER,
            closed_reason TEXT
        );
        CREATE TABLE members (
            room TEXT NOT NULL REFERENCES rooms(id) ON DELETE CASCADE,
            member TEXT NOT NULL,
            kind TEXT NOT NULL CHECK (kind IN ('person', 'appliance')),
            state TEXT NOT NULL CHECK (state IN ('invited', 'joined', 'left')),
            changed INTEGER NOT NULL,
            PRIMARY KEY (room, member)
        );
        """,
        // Another appliance joining over the network is a member of kind appliance (issue 14's intercom).
        """
        ALTER TABLE people ADD COLUMN kind TEXT NOT NULL DEFAULT 'person' CHECK (kind IN ('person', 'appliance'));
        """,
    ]

    let url: URL
    private let connection: SQLiteConnection

    /// Opens (creating, 0600, and migrating) the database at `url`.
    init(url: URL) throws(RoomsError) {
        self.url = url
        let directory = url.deletingLastPathComponent()
        if let problem = PrivateFiles.ensureDirectory(directory) {
            throw RoomsError(.storage, "rooms database \(url.path): cannot create its directory: \(problem)")
        }
        // The file first, 0600, so SQLite's -wal and -shm (which copy its mode) are private too.
        _ = PrivateFiles.ensureFile(url)
        do throws(SQLiteError) {
            connection = try SQLiteConnection(path: url.path)
            try connection.setBusyTimeout(milliseconds: 5_000)
            try connection.execute("PRAGMA journal_mode=WAL")
            try connection.execute("PRAGMA synchronous=NORMAL")
            try connection.execute("PRAGMA foreign_keys=ON")
            try migrate()
        } catch {
            throw Self.failure(error, url: url)
        }
    }

    static func failure(_ error: SQLiteError, url: URL) -> RoomsError {
        RoomsError(.storage, "rooms database \(url.path): \(error.message) (\(error.function))")
    }

    private func migrate() throws(SQLiteError) {
        let target = Self.migrations.count
        try connection.transaction { () throws(SQLiteError) in
            guard case .integer(let found)? = try connection.scalar("PRAGMA user_version") else { return }
            let version = Int(found)
            if version > target {
                throw SQLiteError(function: "PRAGMA user_version", code: 1,
                                  message: "schema \(version) was made by a newer Hark; this build knows up to \(target)", path: url.path)
            }
            for migration in Self.migrations[version...] { try connection.execute(migration) }
            try connection.execute("PRAGMA user_version = \(target)")
        }
    }

    /// Runs `body` in one transaction, turning SQLite's errors into `RoomsError`s naming the file.
    func write(_ body: (SQLiteConnection) throws(SQLiteError) -> Void) throws(RoomsError) {
        do throws(SQLiteError) {
            try connection.transaction { () throws(SQLiteError) in try body(connection) }
        } catch {
            throw Self.failure(error, url: url)
        }
    }

    /// Everything, for the in-memory copy. Rooms closed more than `forgetClosedAfter` ago are deleted
    /// first, so the file does not grow with every room ever made.
    func load(now: Date, forgetClosedAfter: TimeInterval) throws(RoomsError) -> Contents {
        var contents = Contents()
        do throws(SQLiteError) {
            try connection.prepare("DELETE FROM rooms WHERE closed IS NOT NULL AND closed < ?").run([.integer(Self.ms(now) - Int64(forgetClosedAfter * 1000))])
            let people = try connection.prepare("SELECT id, name, device, kind FROM people").rows { row in
                Person(id: row.text(at: 0) ?? "", name: row.text(at: 1) ?? "", device: row.text(at: 2) ?? "",
                       kind: RoomMember.Kind(rawValue: row.text(at: 3) ?? "") ?? .person)
            }
            for person in people { contents.people[person.id] = person }
            let rooms = try connection.prepare("SELECT id, display_name, creator, created, idle_since, closed, closed_reason, rowid FROM rooms").rows { row in
                Room(id: row.text(at: 0) ?? "", displayName: row.text(at: 1) ?? "", creator: row.text(at: 2) ?? "",
                     created: Self.date(row.int64(at: 3)) ?? Date(timeIntervalSince1970: 0), idleSince: Self.date(row.int64(at: 4)),
                     closed: Self.date(row.int64(at: 5)), closedReason: row.text(at: 6).flatMap(Room.ClosedReason.init(rawValue:)),
                     sequence: row.int64(at: 7) ?? 0)
            }
            for room in rooms { contents.rooms[room.id] = room }
            let members = try connection.prepare("SELECT room, member, state FROM members").rows { row in
                (row.text(at: 0) ?? "", row.text(at: 1) ?? "", RoomMember.State(rawValue: row.text(at: 2) ?? "") ?? .left)
            }
            for (room, member, state) in members { contents.members[room, default: [:]][member] = state }
        } catch {
            throw Self.failure(error, url: url)
        }
        return contents
    }

    static func ms(_ date: Date) -> Int64 { ApplianceEvent.milliseconds(date) }

    static func date(_ ms: Int64?) -> Date? { ms.map { Date(timeIntervalSince1970: Double($0) / 1000) } }
}
