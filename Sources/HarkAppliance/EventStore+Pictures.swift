import CSQLite
import Foundation

/// The `pictures` table, for `PictureStore`: it shares the event store's connection so a picture's row and
/// its `picture` event live in one file with one lock.
extension EventStore {
    private static let pictureColumns = "id, time, path, width, height, bytes, source, trigger, turn"

    /// Adds a row for a picture file already in place; returns its id.
    func insertPicture(time: Date, fileName: String, width: Int, height: Int, bytes: Int, source: String, trigger: String,
                       turn: Int64?) throws(SQLiteError) -> Int64 {
        try changing { () throws(SQLiteError) -> Int64 in
            try statement("INSERT INTO pictures (time, path, width, height, bytes, source, trigger, turn) VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
                .run([.integer(ApplianceEvent.milliseconds(time)), .text(fileName), .integer(Int64(width)), .integer(Int64(height)),
                      .integer(Int64(bytes)), .text(source), .text(trigger), SQLiteValue(turn)])
            return connection.lastInsertRowID
        }
    }

    /// Whether a row already names `fileName`.
    func hasPicture(fileName: String) throws(SQLiteError) -> Bool {
        try locked { () throws(SQLiteError) -> Bool in
            try connection.scalar("SELECT 1 FROM pictures WHERE path = ?", .text(fileName)) != nil
        }
    }

    /// The newest `limit` pictures (all when `nil`), newest first, with files resolved in `directory`.
    func pictures(limit: Int?, in directory: URL) throws(SQLiteError) -> [StoredPicture] {
        try pictures("ORDER BY id DESC LIMIT \(limit.map { max(0, $0) } ?? -1)", [], in: directory)
    }

    /// Picture `id`, or `nil`.
    func picture(id: Int64, in directory: URL) throws(SQLiteError) -> StoredPicture? {
        try pictures("WHERE id = ?", [.integer(id)], in: directory).first
    }

    /// Every picture but the newest `keep`, oldest first: what pruning removes.
    func pictures(beyondNewest keep: Int, in directory: URL) throws(SQLiteError) -> [StoredPicture] {
        try pictures("ORDER BY id DESC LIMIT -1 OFFSET \(max(0, keep))", [], in: directory).reversed()
    }

    /// Deletes the rows `ids`, all or none: under a savepoint, inside the open batch's transaction (committed
    /// with the turn that took the picture) or, outside one, as a transaction of its own.
    func deletePictures(ids: [Int64]) throws(SQLiteError) {
        guard !ids.isEmpty else { return }
        try changing { () throws(SQLiteError) in
            try connection.savepoint("delete_pictures") { () throws(SQLiteError) in
                let delete = try statement("DELETE FROM pictures WHERE id = ?")
                for id in ids { try delete.run([.integer(id)]) }
            }
        }
    }

    private func pictures(_ clause: String, _ values: [SQLiteValue], in directory: URL) throws(SQLiteError) -> [StoredPicture] {
        let path = url.path
        return try locked { () throws(SQLiteError) -> [StoredPicture] in
            try connection.prepare("SELECT \(Self.pictureColumns) FROM pictures \(clause)").rows(values) { (row) throws(SQLiteError) -> StoredPicture in
                let id = row.int64(at: 0) ?? 0
                // The name is joined to the directory: a row must not point outside it (`../`, `/etc/…`).
                guard let name = row.text(at: 2), !name.isEmpty, !name.contains("/"), name != "..", name != "." else {
                    throw SQLiteError(function: "EventStore.pictures", code: SQLITE_MISMATCH,
                                      message: "picture \(id): bad file name \"\(row.text(at: 2) ?? "NULL")\"", path: path)
                }
                return StoredPicture(
                    id: id, time: ApplianceEvent.date(milliseconds: row.int64(at: 1) ?? 0), fileName: name,
                    url: directory.appendingPathComponent(name, isDirectory: false),
                    width: Int(row.int64(at: 3) ?? 0), height: Int(row.int64(at: 4) ?? 0), bytes: Int(row.int64(at: 5) ?? 0),
                    source: row.text(at: 6) ?? "", trigger: row.text(at: 7) ?? "", turn: row.int64(at: 8))
            }
        }
    }
}
