import Foundation
import HarkCore
import HarkDevices

/// A picture saved by `PictureStore`: its row in the `pictures` table and where the file is.
public struct StoredPicture: Sendable, Equatable {
    public var id: Int64
    /// When it was captured, to the millisecond.
    public var time: Date
    /// The file's name inside the pictures directory (the table's `path` column), e.g. `2026-11-30T05-40-12.123Z.jpg`.
    public var fileName: String
    /// The file itself.
    public var url: URL
    public var width: Int
    public var height: Int
    /// The JPEG's size in bytes.
    public var bytes: Int
    /// The camera it came from (`Picture.source`): `/dev/video0 YUYV`, `simulated`.
    public var source: String
    /// Why it was taken: `dialog`, `button`, `web`, `cli`.
    public var trigger: String
    /// The turn that asked for it.
    public var turn: Int64?
}

/// A picture store failure that is not SQLite's: a file that cannot be written, bad input.
public struct PictureStoreError: Error, Sendable, CustomStringConvertible {
    /// The file or directory concerned.
    public var path: String
    public var message: String

    public init(path: String, message: String) {
        self.path = path
        self.message = message
    }

    public var description: String { "\(path): \(message)" }
}

/// The appliance's pictures: JPEG files in one directory, indexed in the event store's `pictures` table,
/// at most `limit` of them (the oldest go first).
///
/// `@unchecked Sendable`: `lock` serialises saves and prunes, so choosing a free file name and pruning
/// never race inside the process; the event store guards its own connection.
public final class PictureStore: @unchecked Sendable {
    /// Where the files are (normally `DataDirectory.picturesURL`).
    public let directory: URL
    /// How many pictures are kept.
    public let limit: Int
    public let events: EventStore
    private let lock = NSLock()

    /// Suffix of a file being written; such files are leftovers of a crash and are removed at `init`.
    static let temporarySuffix = ".partial"

    /// Opens the store, creating `directory`. `limit` must be at least 1.
    public init(directory: URL, limit: Int, events: EventStore) throws {
        self.directory = directory.standardizedFileURL
        self.limit = limit
        self.events = events
        guard limit >= 1 else { throw PictureStoreError(path: directory.path, message: "picture limit must be at least 1, got \(limit)") }
        let fm = FileManager.default
        if let problem = PrivateFiles.ensureDirectory(self.directory) {
            throw PictureStoreError(path: self.directory.path, message: "cannot create the pictures directory: \(problem)")
        }
        for name in (try? fm.contentsOfDirectory(atPath: self.directory.path)) ?? [] where name.hasPrefix(".") && name.hasSuffix(Self.temporarySuffix) {
            try? fm.removeItem(at: self.directory.appendingPathComponent(name))
        }
    }

    /// Saves `picture` (from a `Camera`); see `save(jpeg:width:height:capturedAt:source:trigger:turn:)`.
    @discardableResult
    public func save(_ picture: Picture, trigger: String, turn: Int64?) throws -> StoredPicture {
        try save(jpeg: picture.jpeg, width: picture.width, height: picture.height, capturedAt: picture.capturedAt,
                 source: picture.source, trigger: trigger, turn: turn)
    }

    /// Writes the JPEG as `2026-11-30T05-40-12.123Z.jpg` (UTC capture time; `-2`, `-3`… when taken in the same
    /// millisecond), atomically (a temporary file, `fsync`, `rename`), adds its row, appends a `picture` event
    /// (so callers must not append one) and prunes the oldest pictures beyond `limit`.
    @discardableResult
    public func save(jpeg: [UInt8], width: Int, height: Int, capturedAt: Date, source: String, trigger: String,
                     turn: Int64?) throws -> StoredPicture {
        // FF D8 FF: every JPEG starts with SOI followed by a marker; anything else would be served as a broken image.
        guard jpeg.count >= 4, jpeg[0] == 0xFF, jpeg[1] == 0xD8, jpeg[2] == 0xFF else {
            throw PictureStoreError(path: directory.path, message: "not a JPEG (\(jpeg.count) bytes, no FF D8 FF start of image)")
        }
        guard width > 0, height > 0 else {
            throw PictureStoreError(path: directory.path, message: "bad picture size \(width)×\(height)")
        }
        let stored: StoredPicture = try lock.withLock {
            let name = try freeName(for: capturedAt)
            let file = directory.appendingPathComponent(name, isDirectory: false)
            try writeAtomically(jpeg, to: file)
            let id: Int64
            do {
                id = try events.insertPicture(time: capturedAt, fileName: name, width: width, height: height, bytes: jpeg.count,
                                              source: source, trigger: trigger, turn: turn)
            } catch {
                // No row, no file: an unindexed file would never be pruned.
                unlink(file.path)
                throw error
            }
            return StoredPicture(id: id, time: ApplianceEvent.date(milliseconds: ApplianceEvent.milliseconds(capturedAt)), fileName: name,
                                 url: file, width: width, height: height, bytes: jpeg.count, source: source, trigger: trigger, turn: turn)
        }
        try events.append(Self.event(for: stored, trigger: trigger, turn: turn, shared: false))
        try prune()
        return stored
    }

    /// The `picture` event of `stored` for `turn`. `shared`: the turn got a picture another request took at the same
    /// time (`CaptureRounds`); the event then says so and names the turn that took it.
    static func event(for stored: StoredPicture, trigger: String, turn: Int64?, shared: Bool) -> ApplianceEvent {
        var data = JSONObject([("picture", .number(Double(stored.id))), ("path", .string(stored.url.path)),
                               ("width", .number(Double(stored.width))), ("height", .number(Double(stored.height))),
                               ("bytes", .number(Double(stored.bytes))), ("source", .string(stored.source)), ("trigger", .string(trigger))])
        if shared {
            data["shared"] = .bool(true)
            if let taker = stored.turn { data["taken_for_turn"] = .number(Double(taker)) }
        }
        return ApplianceEvent(kind: .picture, text: "Picture saved as \(stored.fileName)\(shared ? " (shared)" : "")", turn: turn,
                              data: data, time: stored.time)
    }

    /// The newest `limit` pictures (all when `nil`), newest first.
    public func list(limit: Int? = nil) throws(SQLiteError) -> [StoredPicture] {
        try events.pictures(limit: limit, in: directory)
    }

    /// Picture `id`, or `nil` when there is none (never saved, or pruned).
    public func picture(id: Int64) throws(SQLiteError) -> StoredPicture? {
        try events.picture(id: id, in: directory)
    }

    /// Removes the oldest pictures beyond `limit`, files and rows; returns what was removed. A file already
    /// gone is fine. A file that cannot be removed keeps its row (so the next prune retries) and is reported
    /// as an `error` event rather than failing the save that triggered the prune.
    @discardableResult
    public func prune() throws -> [StoredPicture] {
        try lock.withLock {
            var removed: [StoredPicture] = []
            for picture in try events.pictures(beyondNewest: limit, in: directory) {
                if unlink(picture.url.path) == 0 || errno == ENOENT {
                    removed.append(picture)
                } else {
                    let reason = String(cString: strerror(errno))
                    try events.append(ApplianceEvent(kind: .error, text: "Could not remove old picture \(picture.url.path): \(reason)",
                                                     data: JSONObject([("picture", .number(Double(picture.id))), ("path", .string(picture.url.path))])))
                }
            }
            try events.deletePictures(ids: removed.map(\.id))
            return removed
        }
    }

    /// `2026-11-30T05-40-12.123Z.jpg`: ISO 8601 with `-` for `:`, which some file systems and URLs dislike.
    private func freeName(for time: Date) throws -> String {
        let stem = ApplianceEvent.iso8601(time).replacingOccurrences(of: ":", with: "-")
        var name = stem + ".jpg"
        var n = 2
        while try FileManager.default.fileExists(atPath: directory.appendingPathComponent(name).path) || events.hasPicture(fileName: name) {
            name = "\(stem)-\(n).jpg"
            n += 1
        }
        return name
    }

    /// Writes the JPEG with `PrivateFiles.writeAtomically`: a reader never sees half a JPEG, and a crash leaves the
    /// whole file or none (a stale `.partial` is removed when the store next opens).
    private func writeAtomically(_ bytes: [UInt8], to file: URL) throws {
        do throws(PrivateFiles.WriteFailure) {
            try PrivateFiles.writeAtomically(bytes, to: file, temporarySuffix: Self.temporarySuffix)
        } catch {
            let what = switch error.step {
            case .create: "cannot create the picture file"
            case .write: "cannot write the picture file"
            case .flush: "cannot flush the picture file"
            case .rename: "cannot rename \(error.temporary) to \(file.lastPathComponent)"
            }
            throw PictureStoreError(path: error.path, message: "\(what): \(error.reason)")
        }
    }
}
