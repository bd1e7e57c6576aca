import CSQLite
import Foundation

/// One open SQLite database (`sqlite3 *`), closed in `deinit` with `sqlite3_close_v2`.
///
/// Not thread-safe by itself and deliberately not `Sendable`: its owner confines it to one lock or thread
/// (`EventStore` holds it under an `NSLock`), so statements never interleave inside a transaction.
public final class SQLiteConnection {
    /// How to open the file.
    public enum Mode: Sendable {
        /// Read and write; the file is created when missing (`SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE`).
        case readWriteCreate
        /// Read only; a missing file is an error, nothing is created (`SQLITE_OPEN_READONLY`).
        case readOnly
    }

    let handle: OpaquePointer
    /// The database file as given to `sqlite3_open_v2`.
    public let path: String

    /// Opens (or creates) a database file. The corresponding C function is `sqlite3_open_v2`.
    public init(path: String, mode: Mode = .readWriteCreate) throws(SQLiteError) {
        self.path = path
        var db: OpaquePointer?
        let flags = mode == .readOnly ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)
        let rc = sqlite3_open_v2(path, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            // sqlite3_open_v2 allocates a handle even when it fails, to carry the message: free it before throwing.
            var message = db.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(rc))
            // "unable to open database file" alone hides why; the failed system call's errno says it.
            if let db {
                let code = sqlite3_system_errno(db)
                if code != 0 { message += ": " + String(cString: strerror(code)) }
            }
            sqlite3_close_v2(db)
            throw SQLiteError(function: "sqlite3_open_v2", code: rc, message: message, path: path)
        }
        handle = db
    }

    deinit {
        // _v2: statements still alive keep the connection as a zombie until they are finalized, instead of failing.
        sqlite3_close_v2(handle)
    }

    /// The error for a failed call on this connection, with `sqlite3_errmsg`'s text.
    func error(_ function: String, _ code: Int32) -> SQLiteError {
        SQLiteError(function: function, code: code, message: String(cString: sqlite3_errmsg(handle)), path: path)
    }

    /// Runs one or more statements that return no rows we need. The corresponding C function is `sqlite3_exec`.
    public func execute(_ sql: String) throws(SQLiteError) {
        var message: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &message)
        defer { sqlite3_free(message) }
        guard rc == SQLITE_OK else {
            let text = message.map { String(cString: $0) } ?? String(cString: sqlite3_errmsg(handle))
            throw SQLiteError(function: "sqlite3_exec", code: rc, message: text, path: path)
        }
    }

    /// Compiles one statement. The corresponding C function is `sqlite3_prepare_v2`.
    public func prepare(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        try SQLiteStatement(connection: self, sql: sql)
    }

    /// Runs `sql` with `values` bound and returns the first column of the first row, `nil` when there is no row.
    public func scalar(_ sql: String, _ values: SQLiteValue...) throws(SQLiteError) -> SQLiteValue? {
        let statement = try prepare(sql)
        try statement.bind(values)
        guard try statement.step() else { return nil }
        return statement.value(at: 0)
    }

    /// The rowid of the last successful INSERT. The corresponding C function is `sqlite3_last_insert_rowid`.
    public var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// Whether a transaction is open (`sqlite3_get_autocommit` is 0).
    public var inTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    /// Rows changed by the last INSERT, UPDATE or DELETE. The corresponding C function is `sqlite3_changes`.
    public var changes: Int { Int(sqlite3_changes(handle)) }

    /// How long a statement waits for another connection's lock before failing with `SQLITE_BUSY`.
    /// The corresponding C function is `sqlite3_busy_timeout`.
    public func setBusyTimeout(milliseconds: Int32) throws(SQLiteError) {
        let rc = sqlite3_busy_timeout(handle, milliseconds)
        guard rc == SQLITE_OK else { throw error("sqlite3_busy_timeout", rc) }
    }

    /// Runs `body` inside `BEGIN IMMEDIATE … COMMIT`, rolling back when it throws. IMMEDIATE takes the write
    /// lock up front, so two processes doing read-then-write (a migration) cannot both pass the read.
    public func transaction<T>(_ body: () throws(SQLiteError) -> T) throws(SQLiteError) -> T {
        try execute("BEGIN IMMEDIATE")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    /// Runs `body` under `SAVEPOINT name … RELEASE name`: all of it or none, inside an open transaction (which
    /// it joins, to be committed with it) or, outside one, as a transaction of its own.
    public func savepoint<T>(_ name: String, _ body: () throws(SQLiteError) -> T) throws(SQLiteError) -> T {
        try execute("SAVEPOINT \(name)")
        do {
            let result = try body()
            try execute("RELEASE \(name)")
            return result
        } catch {
            try? execute("ROLLBACK TO \(name)")
            try? execute("RELEASE \(name)")
            throw error
        }
    }
}
