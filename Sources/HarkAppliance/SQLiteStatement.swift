import CSQLite

/// A compiled statement (`sqlite3_stmt *`), finalized in `deinit` with `sqlite3_finalize`.
/// It keeps its connection alive; like the connection it is confined by its owner, not `Sendable`.
public final class SQLiteStatement {
    let handle: OpaquePointer
    /// The connection it was prepared on (kept alive by this reference).
    public let connection: SQLiteConnection

    /// SQLite copies the bytes before `sqlite3_bind_*` returns: Swift strings and arrays are only valid
    /// for the duration of the call, so they must never be bound as `SQLITE_STATIC`.
    static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    /// Compiles `sql`. The corresponding C function is `sqlite3_prepare_v2`.
    init(connection: SQLiteConnection, sql: String) throws(SQLiteError) {
        self.connection = connection
        var statement: OpaquePointer?
        let rc = sqlite3_prepare_v2(connection.handle, sql, -1, &statement, nil)
        guard rc == SQLITE_OK, let statement else {
            sqlite3_finalize(statement)
            var error = connection.error("sqlite3_prepare_v2", rc)
            if rc == SQLITE_OK { error.message = "no statement in \"\(sql)\"" }
            throw error
        }
        handle = statement
    }

    deinit {
        sqlite3_finalize(handle)
    }

    /// Resets the statement and binds `values` to parameters 1…n (`sqlite3_reset`, `sqlite3_clear_bindings`,
    /// `sqlite3_bind_*`).
    public func bind(_ values: [SQLiteValue]) throws(SQLiteError) {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            let rc: Int32
            switch value {
            case .null: rc = sqlite3_bind_null(handle, index)
            case .integer(let v): rc = sqlite3_bind_int64(handle, index, v)
            case .real(let v): rc = sqlite3_bind_double(handle, index, v)
            case .text(let v): rc = sqlite3_bind_text(handle, index, v, -1, Self.transient)
            case .blob(let v):
                rc = v.withUnsafeBytes { sqlite3_bind_blob64(handle, index, $0.baseAddress, sqlite3_uint64($0.count), Self.transient) }
            }
            guard rc == SQLITE_OK else { throw connection.error("sqlite3_bind (parameter \(index))", rc) }
        }
    }

    /// Advances to the next row: `true` when a row is ready, `false` when done. The corresponding C function
    /// is `sqlite3_step`.
    public func step() throws(SQLiteError) -> Bool {
        let rc = sqlite3_step(handle)
        switch rc {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            // Reset so the statement releases its read or write lock even though the caller gives up on it.
            let error = connection.error("sqlite3_step", rc)
            sqlite3_reset(handle)
            throw error
        }
    }

    /// Binds `values` and steps to the end: for INSERT, UPDATE, DELETE.
    public func run(_ values: [SQLiteValue] = []) throws(SQLiteError) {
        try bind(values)
        while try step() {}
    }

    /// Binds `values` and collects every row through `read`.
    public func rows<T>(_ values: [SQLiteValue] = [], _ read: (SQLiteStatement) throws(SQLiteError) -> T) throws(SQLiteError) -> [T] {
        try bind(values)
        var out: [T] = []
        while try step() { out.append(try read(self)) }
        return out
    }

    /// The current row's column `index` (0-based). The corresponding C functions are `sqlite3_column_*`.
    public func value(at index: Int32) -> SQLiteValue {
        switch sqlite3_column_type(handle, index) {
        case SQLITE_INTEGER: return .integer(sqlite3_column_int64(handle, index))
        case SQLITE_FLOAT: return .real(sqlite3_column_double(handle, index))
        case SQLITE_TEXT: return .text(text(at: index) ?? "")
        case SQLITE_BLOB:
            let count = Int(sqlite3_column_bytes(handle, index))
            guard count > 0, let bytes = sqlite3_column_blob(handle, index) else { return .blob([]) }
            return .blob(Array(UnsafeRawBufferPointer(start: bytes, count: count)))
        default: return .null
        }
    }

    /// Column `index` as an integer, `nil` when NULL.
    public func int64(at index: Int32) -> Int64? {
        sqlite3_column_type(handle, index) == SQLITE_NULL ? nil : sqlite3_column_int64(handle, index)
    }

    /// Column `index` as a double, `nil` when NULL.
    public func double(at index: Int32) -> Double? {
        sqlite3_column_type(handle, index) == SQLITE_NULL ? nil : sqlite3_column_double(handle, index)
    }

    /// Column `index` as text, `nil` when NULL.
    public func text(at index: Int32) -> String? {
        guard sqlite3_column_type(handle, index) != SQLITE_NULL, let bytes = sqlite3_column_text(handle, index) else { return nil }
        let count = Int(sqlite3_column_bytes(handle, index))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }
}
