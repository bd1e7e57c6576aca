import Foundation
import Synchronization

/// The token ids (`jti`) that no longer work although their signature and expiry are fine: tokens logged
/// out or revoked, in `revoked.json` beside the secret, `{"tokens": [{"id", "expires"}]}`.
///
/// An entry is kept until its token would have expired anyway, so the file stays as small as the number of
/// tokens revoked in the last 30 days. The file is shared like the others in the auth directory (written under
/// its lock, replaced atomically); readers cache it by modification time and size, so checking a token costs
/// one `stat`, not a parse, unless something was revoked.
final class RevokedTokens: Sendable {
    struct Entry: Codable, Equatable {
        var id: String
        /// Seconds since 1970 (UTC): the token's own `exp`, after which the entry is dropped.
        var expires: Double
    }

    struct Contents: Codable {
        var tokens: [Entry] = []
    }

    private struct Cache {
        var stamp: [Int64] = []
        var ids: Set<String> = []
    }

    let directory: URL
    let file: URL
    private let cache = Mutex(Cache())

    init(directory: URL) {
        self.directory = directory
        self.file = directory.appendingPathComponent("revoked.json")
    }

    /// Fails if the file exists but cannot be read as revoked tokens.
    func validate() throws(AuthStoreError) {
        _ = try load()
    }

    /// Adds `id` until `expires`; true if it was not listed already.
    @discardableResult
    func revoke(id: String, expires: Date, now: Date) throws(AuthStoreError) -> Bool {
        try AuthFiles.withLock(in: directory) { () throws(AuthStoreError) -> Bool in
            var contents = try load()
            contents.tokens.removeAll { $0.expires <= now.timeIntervalSince1970 }
            let added = !contents.tokens.contains { $0.id == id }
            if added { contents.tokens.append(Entry(id: id, expires: expires.timeIntervalSince1970)) }
            try AuthFiles.encodeJSON(contents, to: file)
            return added
        }
    }

    /// Whether `id` is revoked.
    func contains(_ id: String) throws(AuthStoreError) -> Bool {
        let stamp = Self.stamp(file)
        if let hit = cache.withLock({ $0.stamp == stamp ? $0.ids.contains(id) : nil }) { return hit }
        let ids = Set(try load().tokens.map(\.id))
        cache.withLock { $0 = Cache(stamp: stamp, ids: ids) }
        return ids.contains(id)
    }

    private func load() throws(AuthStoreError) -> Contents {
        try AuthFiles.decodeJSON(Contents.self, from: file, shape: #"a revoked-token file ({"tokens": [{"id", "expires"}]})"#) ?? Contents()
    }

    /// Modification time (ns), size and inode of `file`; empty when it does not exist.
    private static func stamp(_ file: URL) -> [Int64] {
        var info = stat()
        guard stat(file.path, &info) == 0 else { return [] }
        return [Int64(info.st_mtim.tv_sec), Int64(info.st_mtim.tv_nsec), Int64(info.st_size), Int64(bitPattern: UInt64(info.st_ino))]
    }
}
