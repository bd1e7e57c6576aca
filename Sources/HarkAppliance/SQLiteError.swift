import CSQLite

/// A failed SQLite call: the C function, its result code and SQLite's own message (`sqlite3_errmsg`),
/// plus the database file when one is involved, so every error says which file it is about.
public struct SQLiteError: Error, Sendable, CustomStringConvertible {
    /// The C function that failed (`sqlite3_open_v2`, `sqlite3_step`, …) or, for Hark's own checks, what was checked.
    public var function: String
    /// The SQLite result code (`SQLITE_CANTOPEN` = 14, `SQLITE_NOTADB` = 26, …).
    public var code: Int32
    /// What went wrong, readable on its own.
    public var message: String
    /// The database file, when the error is about one.
    public var path: String?

    public init(function: String, code: Int32, message: String, path: String? = nil) {
        self.function = function
        self.code = code
        self.message = message
        self.path = path
    }

    public var description: String {
        "\(path.map { "\($0): " } ?? "")\(message) (\(function), SQLite code \(code))"
    }

    /// The primary result code (extended codes carry details in the upper bits).
    public var primaryCode: Int32 { code & 0xFF }

    /// `SQLITE_NOTADB` or `SQLITE_CORRUPT`: the file is not a database SQLite can read.
    public var isNotADatabase: Bool { primaryCode == SQLITE_NOTADB || primaryCode == SQLITE_CORRUPT }

    /// The file's content is the problem, not access to it: not a database, damaged, or a schema or row Hark
    /// does not understand (`SQLITE_MISMATCH`, which Hark's own checks use). Callers map it to "bad data" (65).
    public var isBadData: Bool { isNotADatabase || primaryCode == SQLITE_MISMATCH }
}
