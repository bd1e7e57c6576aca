import CSQLite
import Foundation
import HarkCore

/// The appliance's event log, turns and picture index: one SQLite database (`events.sqlite3`) in WAL mode.
///
/// Outside a turn every `append(_:)` is its own transaction, committed before it returns. A turn's rows (its
/// `turns` row, its events, its pictures' rows) go into one transaction opened by `beginBatch()` and committed
/// when the turn ends (`endBatch()`), or at the latest `batchMaxDelay` (100 ms) after it opened, by a timer:
/// a commit costs SQLite about as much as the rest of a typed turn (its WAL pages, its locks), and a turn
/// made about seven of them. So a crash keeps everything that happened up to 100 ms before it, a slow turn's
/// first events included. Commits are also spaced at least `commitSpacing` (10 ms) apart: a turn that ends
/// sooner after the previous commit is committed by a timer at that point, together with every turn that
/// ended meanwhile (group commit). One person's turns are seconds apart and each still commits as it ends;
/// under load (a server answering thousands of typed turns a second) the log costs one commit per 10 ms
/// instead of one per turn, and a crash can lose the turns of the last 10 ms although they were answered.
/// Readers in this process see the rows at once; other processes (`hark events`) when they are committed,
/// and never block the writer (WAL).
///
/// Durability: the store runs with `journal_mode=WAL` and `synchronous=NORMAL`. In WAL mode a commit is
/// the append of its pages to the `-wal` file with `write(2)`, done before `sqlite3_step` returns; NORMAL
/// only postpones the `fsync` to checkpoints. Once `write` returns the data is in the kernel's page cache,
/// which belongs to no process, so SIGTERM, SIGKILL or a crash of Hark loses nothing committed: the next
/// opener replays the WAL. Only a power cut or kernel crash can roll back the last few commits (never
/// corrupting the file) — a fair price for not waiting on the SD card's flush at every event.
///
/// `@unchecked Sendable`: the connection and its cached statements are touched only while holding `lock`;
/// subscribers are guarded by their own lock and called on a private serial queue (see `subscribe(_:)`).
public final class EventStore: @unchecked Sendable {
    /// How the store is opened.
    public enum Access: Sendable {
        /// Create the file and directories when missing, upgrade an older schema (the appliance).
        case readWrite
        /// Open an existing store for reading only; create and change nothing (`hark events`).
        case readOnly
    }

    /// The schema this build writes: `PRAGMA user_version` of a current store.
    public static var schemaVersion: Int { migrations.count }

    /// `migrations[n]` takes a store from schema `n` to `n + 1`. Append, never edit: stores in the field
    /// are at any earlier version. Times are milliseconds since 1970 UTC; AUTOINCREMENT so an id is never
    /// reused, even after old rows are pruned, because the web API pages with `afterID`.
    static let migrations: [String] = [
        """
        CREATE TABLE turns (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            started INTEGER NOT NULL,
            source TEXT NOT NULL,
            finished INTEGER,
            transcript TEXT,
            acoustic_confidence REAL,
            intent TEXT,
            confidence REAL,
            reply TEXT,
            accepted INTEGER
        );
        CREATE TABLE events (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            time INTEGER NOT NULL,
            kind TEXT NOT NULL,
            turn INTEGER,
            text TEXT NOT NULL,
            data TEXT NOT NULL DEFAULT '{}'
        );
        CREATE INDEX events_by_time ON events(time);
        CREATE INDEX events_by_turn ON events(turn);
        CREATE TABLE pictures (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            time INTEGER NOT NULL,
            path TEXT NOT NULL UNIQUE,
            width INTEGER NOT NULL,
            height INTEGER NOT NULL,
            bytes INTEGER NOT NULL,
            source TEXT NOT NULL,
            trigger TEXT NOT NULL,
            turn INTEGER
        );
        """,
    ]

    /// How long a statement waits for another process's lock (a checkpoint, a migration) before failing.
    static let busyTimeoutMilliseconds: Int32 = 5_000

    /// The database file.
    public let url: URL
    public let access: Access

    let lock = NSLock()
    /// Only touched while holding `lock`.
    let connection: SQLiteConnection
    /// Prepared once: appends are the hot path. Only touched while holding `lock`.
    private let insertEvent: SQLiteStatement
    /// The other writes of every turn, compiled on first use (`statement(_:)`). Guarded by `lock`.
    private var statements: [String: SQLiteStatement] = [:]
    /// Open batches (`beginBatch`), and when the open transaction began (nil: none is open). Guarded by `lock`.
    private var batchDepth = 0
    private var batchOpened: DispatchTime?
    /// When the last batch commit happened, and the open transaction whose spaced commit is armed. Guarded by `lock`.
    private var lastCommit: DispatchTime?
    private var spacedCommitFor: DispatchTime?
    /// The shortest time between two batch commits: a turn that ends sooner after the previous commit waits
    /// at most this long for its own, shared with the turns that end meanwhile.
    public static let commitSpacingMilliseconds = 10
    static let commitSpacing = DispatchTimeInterval.milliseconds(commitSpacingMilliseconds)
    /// The longest a batch's rows wait for their commit.
    public static let batchMaxDelayMilliseconds = 100
    public static let batchMaxDelay = DispatchTimeInterval.milliseconds(batchMaxDelayMilliseconds)
    /// Where a commit that no caller waits for (the timer's) reports its failure. Guarded by `lock`.
    private var deferredFailure: (@Sendable (SQLiteError) -> Void)?

    let subscriberLock = NSLock()
    /// Guarded by `subscriberLock`.
    var subscribers: [UInt64: @Sendable (StoredEvent) -> Void] = [:]
    /// Guarded by `subscriberLock`.
    var nextSubscriberID: UInt64 = 1
    /// Delivers new events to subscribers in id order, off the appending thread.
    let delivery = DispatchQueue(label: "hark.event-store.subscribers")

    /// Opens the store at `path` (normally `DataDirectory.eventStoreURL`).
    ///
    /// With `.readWrite` it creates missing directories and the file, switches to WAL and brings the schema
    /// up to date. A file that is not an SQLite database, a store from a newer Hark, a database of some
    /// other program, a directory that cannot be written and a missing file (`.readOnly`) are errors naming
    /// the file.
    public init(path: URL, access: Access = .readWrite) throws(SQLiteError) {
        url = path.standardizedFileURL
        self.access = access
        let file = url.path
        if access == .readWrite { try Self.createDirectory(for: url) }
        let connection: SQLiteConnection
        do throws(SQLiteError) {
            connection = try SQLiteConnection(path: file, mode: access == .readOnly ? .readOnly : .readWriteCreate)
        } catch {
            throw Self.explainOpenFailure(error, url: url, access: access)
        }
        self.connection = connection
        do throws(SQLiteError) {
            try connection.setBusyTimeout(milliseconds: Self.busyTimeoutMilliseconds)
            // The first read of the file: a non-SQLite file fails here with SQLITE_NOTADB.
            let version = try Self.userVersion(connection)
            if access == .readWrite {
                try Self.enableWAL(connection)
                try connection.execute("PRAGMA synchronous=NORMAL")
                try Self.migrate(connection, from: version)
            } else if version != Self.schemaVersion {
                throw SQLiteError(function: "PRAGMA user_version", code: SQLITE_MISMATCH,
                                  message: "event store schema \(version), this build reads schema \(Self.schemaVersion)"
                                      + (version < Self.schemaVersion ? " (the appliance upgrades it when it next starts)" : " (made by a newer Hark)"),
                                  path: file)
            }
            insertEvent = try connection.prepare("INSERT INTO events (time, kind, turn, text, data) VALUES (?, ?, ?, ?, ?)")
        } catch {
            throw Self.explainOpenFailure(error, url: url, access: access)
        }
    }

    /// Appends `event` and commits it before returning; returns its id. Subscribers hear of it afterwards.
    @discardableResult
    public func append(_ event: ApplianceEvent) throws(SQLiteError) -> Int64 {
        let data = JSONValue.object(event.data).serialized()
        return try changing { () throws(SQLiteError) -> Int64 in
            try insertEvent.run([.integer(ApplianceEvent.milliseconds(event.time)), .text(event.kind.rawValue),
                                 SQLiteValue(event.turn), .text(event.text), .text(data)])
            let id = connection.lastInsertRowID
            // Queued while still holding the lock, so subscribers get events in id order.
            notifySubscribers(StoredEvent(id: id, event: event))
            return id
        }
    }

    /// Events in id (commit) order, oldest first: those at or after `since`, with an id above `afterID`, of one
    /// of `kinds`, at most `limit` of them (the first ones). Page through the log with `afterID` = the last id seen.
    public func events(since: Date? = nil, afterID: Int64? = nil, limit: Int? = nil,
                       kinds: Set<ApplianceEvent.Kind>? = nil) throws(SQLiteError) -> [StoredEvent] {
        let (filter, values) = Self.filter(since: since, afterID: afterID, kinds: kinds)
        let sql = "SELECT id, time, kind, turn, text, data FROM events\(filter) ORDER BY id LIMIT \(limit.map { max(0, $0) } ?? -1)"
        return try query(sql, values)
    }

    /// The newest `limit` events that match, still oldest first: what `hark events --limit N` shows.
    public func latestEvents(limit: Int, since: Date? = nil, kinds: Set<ApplianceEvent.Kind>? = nil) throws(SQLiteError) -> [StoredEvent] {
        let (filter, values) = Self.filter(since: since, afterID: nil, kinds: kinds)
        let sql = "SELECT id, time, kind, turn, text, data FROM events\(filter) ORDER BY id DESC LIMIT \(max(0, limit))"
        return try query(sql, values).reversed()
    }

    /// The id of the newest event, `nil` while the log is empty.
    public func lastEventID() throws(SQLiteError) -> Int64? {
        try locked { () throws(SQLiteError) -> Int64? in
            if case .integer(let id)? = try connection.scalar("SELECT max(id) FROM events") { return id }
            return nil
        }
    }

    private static func filter(since: Date?, afterID: Int64?, kinds: Set<ApplianceEvent.Kind>?) -> (String, [SQLiteValue]) {
        var clauses: [String] = []
        var values: [SQLiteValue] = []
        if let since {
            clauses.append("time >= ?")
            values.append(.integer(ApplianceEvent.milliseconds(since)))
        }
        if let afterID {
            clauses.append("id > ?")
            values.append(.integer(afterID))
        }
        if let kinds {
            // Sorted so the statement text is the same for the same set.
            let names = kinds.map(\.rawValue).sorted()
            clauses.append("kind IN (\(names.map { _ in "?" }.joined(separator: ", ")))")
            values += names.map { .text($0) }
        }
        return (clauses.isEmpty ? "" : " WHERE " + clauses.joined(separator: " AND "), values)
    }

    private func query(_ sql: String, _ values: [SQLiteValue]) throws(SQLiteError) -> [StoredEvent] {
        let path = url.path
        return try locked { () throws(SQLiteError) -> [StoredEvent] in
            try connection.prepare(sql).rows(values) { (row) throws(SQLiteError) -> StoredEvent in
                let id = row.int64(at: 0) ?? 0
                func bad(_ what: String) -> SQLiteError {
                    SQLiteError(function: "EventStore.events", code: SQLITE_MISMATCH, message: "event \(id): \(what)", path: path)
                }
                guard let rawKind = row.text(at: 2), let kind = ApplianceEvent.Kind(rawValue: rawKind) else {
                    throw bad("unknown kind \"\(row.text(at: 2) ?? "NULL")\"")
                }
                let parsed: JSONValue
                do throws(JSONSyntaxError) {
                    parsed = try JSONValue.parse(row.text(at: 5) ?? "{}")
                } catch {
                    throw bad("data is not valid JSON: \(error)")
                }
                guard let data = parsed.objectValue else { throw bad("data is not a JSON object") }
                let event = ApplianceEvent(kind: kind, text: row.text(at: 4) ?? "", turn: row.int64(at: 3), data: data,
                                           time: ApplianceEvent.date(milliseconds: row.int64(at: 1) ?? 0))
                return StoredEvent(id: id, event: event)
            }
        }
    }

    // MARK: Batches

    /// Opens a batch: until the matching `endBatch()` (or for at most `batchMaxDelay`), changes share one
    /// transaction. Batches nest and overlap (two turns at once share it); the last to end commits.
    public func beginBatch() {
        lock.lock()
        batchDepth += 1
        lock.unlock()
    }

    /// Ends a batch; the last open one commits what the batches wrote — at once, unless the previous commit
    /// was less than `commitSpacing` ago: then a timer commits at that point, and turns that end meanwhile
    /// share the commit (group commit; see the type's comment).
    public func endBatch() throws(SQLiteError) {
        try locked { () throws(SQLiteError) in
            batchDepth = max(0, batchDepth - 1)
            guard batchDepth == 0, let opened = batchOpened else { return }
            if let last = lastCommit, DispatchTime.now() < last + Self.commitSpacing {
                if spacedCommitFor != opened {
                    spacedCommitFor = opened
                    DispatchQueue.global().asyncAfter(deadline: last + Self.commitSpacing) { [weak self] in
                        self?.commitDue(opened)
                    }
                }
                return
            }
            try commitBatch()
        }
    }

    /// Calls `handler` when a timer's commit fails (no caller is waiting for that one to throw to).
    public func onDeferredCommitFailure(_ handler: @escaping @Sendable (SQLiteError) -> Void) {
        lock.lock()
        deferredFailure = handler
        lock.unlock()
    }

    /// Runs a change holding `lock`: inside the batch transaction when a batch is open (opening it, and
    /// arming the timer that commits it, if this is its first change), on its own otherwise.
    func changing<T>(_ body: () throws(SQLiteError) -> T) throws(SQLiteError) -> T {
        try locked { () throws(SQLiteError) -> T in
            if batchDepth > 0 && batchOpened == nil {
                try connection.execute("BEGIN IMMEDIATE")
                let opened = DispatchTime.now()
                batchOpened = opened
                DispatchQueue.global().asyncAfter(deadline: opened + Self.batchMaxDelay) { [weak self] in
                    self?.commitDue(opened)
                }
            }
            let result: T
            do throws(SQLiteError) { result = try body() } catch {
                // Some failures (a full disk) make SQLite roll the whole transaction back itself.
                if batchOpened != nil && !connection.inTransaction { batchOpened = nil }
                throw error
            }
            // A change outside any batch is committed before it returns, with what finished turns left waiting
            // for their spaced commit.
            if batchDepth == 0 { try commitBatch() }
            return result
        }
    }

    /// The timer: commits the transaction opened at `opened` if it is still open.
    private func commitDue(_ opened: DispatchTime) {
        lock.lock()
        defer { lock.unlock() }
        guard batchOpened == opened else { return }
        do throws(SQLiteError) { try commitBatch() } catch { deferredFailure?(error) }
    }

    /// Commits the open batch transaction, if any; holding `lock`. A failed commit is rolled back: its rows
    /// are lost, and the error says so to whoever called.
    func commitBatch() throws(SQLiteError) {
        guard batchOpened != nil else { return }
        batchOpened = nil
        do throws(SQLiteError) { try connection.execute("COMMIT") } catch {
            try? connection.execute("ROLLBACK")
            throw error
        }
        lastCommit = .now()
    }

    deinit {
        lock.lock()
        try? commitBatch()
        lock.unlock()
    }

    /// The compiled statement for `sql`, compiled once and kept: compiling an INSERT costs SQLite more than
    /// running it. For writes (INSERT, UPDATE, DELETE), which `run` steps to the end; holding `lock`.
    func statement(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        if let compiled = statements[sql] { return compiled }
        let compiled = try connection.prepare(sql)
        statements[sql] = compiled
        return compiled
    }

    /// Runs `body` holding `lock`: the one way to reach the connection. (`NSLock.withLock` erases typed throws.)
    func locked<T>(_ body: () throws(SQLiteError) -> T) throws(SQLiteError) -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }

    // MARK: Opening

    private static func createDirectory(for url: URL) throws(SQLiteError) {
        let directory = url.deletingLastPathComponent()
        if let problem = PrivateFiles.ensureDirectory(directory) {
            throw SQLiteError(function: "mkdir", code: SQLITE_CANTOPEN,
                              message: "cannot create the event store's directory \(directory.path): \(problem)", path: url.path)
        }
        // The file first, 0600, so SQLite's -wal and -shm (which copy its mode) are private too; files an older
        // Hark left readable are tightened. If that fails, SQLite's own open below says why, naming the file.
        _ = PrivateFiles.ensureFile(url)
        for suffix in ["-wal", "-shm", "-journal"] { PrivateFiles.restrict(url.path + suffix) }
    }

    private static func userVersion(_ connection: SQLiteConnection) throws(SQLiteError) -> Int {
        guard case .integer(let version)? = try connection.scalar("PRAGMA user_version") else { return 0 }
        return Int(version)
    }

    private static func enableWAL(_ connection: SQLiteConnection) throws(SQLiteError) {
        // The pragma answers with the mode now in force; a file system without shared memory keeps the old one.
        let mode = try connection.scalar("PRAGMA journal_mode=WAL")
        guard case .text(let name)? = mode, name.lowercased() == "wal" else {
            throw SQLiteError(function: "PRAGMA journal_mode=WAL", code: SQLITE_ERROR,
                              message: "could not switch the event store to WAL mode (still \(String(describing: mode)))", path: connection.path)
        }
    }

    /// Brings the schema from `version` to `schemaVersion`, in one transaction with the version bump.
    private static func migrate(_ connection: SQLiteConnection, from version: Int) throws(SQLiteError) {
        if version == schemaVersion { return }
        if version > schemaVersion {
            throw SQLiteError(function: "PRAGMA user_version", code: SQLITE_MISMATCH,
                              message: "event store has schema \(version), made by a newer Hark; this build knows up to \(schemaVersion)",
                              path: connection.path)
        }
        try connection.transaction { () throws(SQLiteError) in
            // Re-read under the write lock: another process may have migrated since we looked.
            let current = try userVersion(connection)
            if current >= schemaVersion { return }
            if current == 0, case .integer(let tables)? = try connection.scalar("SELECT count(*) FROM sqlite_master"), tables > 0 {
                throw SQLiteError(function: "PRAGMA user_version", code: SQLITE_MISMATCH,
                                  message: "not a Hark event store: an SQLite database with \(tables) tables of another program", path: connection.path)
            }
            for step in current..<schemaVersion { try connection.execute(migrations[step]) }
            try connection.execute("PRAGMA user_version = \(schemaVersion)")
        }
    }

    /// Turns SQLite's terse open errors into ones that say what is wrong with which file.
    private static func explainOpenFailure(_ error: SQLiteError, url: URL, access: Access) -> SQLiteError {
        var error = error
        error.path = url.path
        let fm = FileManager.default
        let directory = url.deletingLastPathComponent().path
        // faccessat with AT_EACCESS asks as the kernel will for the real open (effective and file-system ids),
        // where access(2) and FileManager.isWritableFile ask with the real user id.
        func writable(_ path: String) -> Bool { faccessat(AT_FDCWD, path, W_OK, AT_EACCESS) == 0 }
        if error.isNotADatabase {
            error.message = "not an SQLite database, or a damaged one (\(error.message)); move it aside and Hark starts a new store"
        } else if error.primaryCode == SQLITE_CANTOPEN || error.primaryCode == SQLITE_READONLY || error.primaryCode == SQLITE_PERM {
            if access == .readOnly, !fm.fileExists(atPath: url.path) {
                error.message = "no event store here (\(error.message))"
            } else if access == .readWrite, !writable(directory) {
                // WAL needs the -wal and -shm files next to the database, so the directory must be writable too.
                error.message = "the directory \(directory) is not writable (\(error.message))"
            } else if access == .readWrite, fm.fileExists(atPath: url.path), !writable(url.path) {
                error.message = "the file is not writable (\(error.message))"
            }
        }
        return error
    }
}
