/// A value bound to a statement parameter. Text and blobs are copied by SQLite (`SQLITE_TRANSIENT`).
public enum SQLiteValue: Sendable, Equatable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])

    /// `.integer`, or `.null` for `nil`.
    public init(_ value: Int64?) { self = value.map { .integer($0) } ?? .null }
    /// `.real`, or `.null` for `nil`.
    public init(_ value: Double?) { self = value.map { .real($0) } ?? .null }
    /// `.text`, or `.null` for `nil`.
    public init(_ value: String?) { self = value.map { .text($0) } ?? .null }
}
