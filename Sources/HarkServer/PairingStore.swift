import Foundation

/// The outstanding pairing codes in `pairing.json`, shared between processes: `hark pair` adds codes, the
/// server consumes them. Every operation takes the directory's lock and re-reads the file, so nothing is
/// cached that another process could have changed.
///
/// Codes are stored as HMAC-SHA256 under a key derived from the token secret, never in clear: a copy of
/// `pairing.json` (a backup, a support bundle) reveals no usable code, and without the secret the 10⁶
/// possible codes cannot be tested against it offline.
struct PairingStore: Sendable {
    struct Entry: Codable, Equatable {
        /// base64url HMAC-SHA256 of the code.
        var hash: String
        /// Seconds since 1970 (UTC) from which the code is refused.
        var expires: Double
    }

    struct Contents: Codable {
        var codes: [Entry] = []
    }

    /// More live codes than this is abuse or a runaway script: refuse rather than dilute the code space.
    static let maximumOutstanding = 10
    static let digits = 6

    let directory: URL
    let file: URL
    private let key: [UInt8]

    init(directory: URL, key: [UInt8]) {
        self.directory = directory
        self.file = directory.appendingPathComponent("pairing.json")
        self.key = key
    }

    /// Fails if the file exists but cannot be read as pairing codes.
    func validate() throws(AuthStoreError) {
        _ = try load()
    }

    /// Draws a fresh code (`randombytes_uniform`), unlike every live one, and records it until `expires`.
    func issue(now: Date, expires: Date) throws(AuthStoreError) -> String {
        try AuthFiles.withLock(in: directory) { () throws(AuthStoreError) -> String in
            var contents = try load()
            contents.codes.removeAll { $0.expires <= now.timeIntervalSince1970 }
            guard contents.codes.count < Self.maximumOutstanding else {
                throw AuthStoreError(subject: file.path, message: "\(Self.maximumOutstanding) pairing codes are already outstanding; wait until some expire")
            }
            let live = Set(contents.codes.map(\.hash))
            var code: String
            var hash: String
            repeat {
                let n: UInt32
                do throws(SodiumError) { n = try Sodium.uniform(1_000_000) } catch { throw AuthStoreError(subject: file.path, message: error.description) }
                let digits = String(n)
                code = String(repeating: "0", count: Self.digits - digits.count) + digits
                hash = Sodium.base64URL(digest(code))
            } while live.contains(hash)
            contents.codes.append(Entry(hash: hash, expires: expires.timeIntervalSince1970))
            try save(contents)
            return code
        }
    }

    /// Removes and reports a live code equal to `code`; false if there is none (wrong, used or expired).
    func consume(_ code: String, now: Date) throws(AuthStoreError) -> Bool {
        let given = digest(code)
        return try AuthFiles.withLock(in: directory) { () throws(AuthStoreError) -> Bool in
            let before = try load()
            var contents = before
            contents.codes.removeAll { $0.expires <= now.timeIntervalSince1970 }
            // Compare with every entry, in constant time each, rather than looking the hash up.
            var match: Int?
            for (i, entry) in contents.codes.enumerated() {
                if let stored = Sodium.decodeBase64URL(entry.hash), Sodium.constantTimeEqual(stored, given) { match = i }
            }
            if let match { contents.codes.remove(at: match) }
            if contents.codes != before.codes { try save(contents) }
            return match != nil
        }
    }

    /// Removes every outstanding code; returns how many were live.
    func voidAll() throws(AuthStoreError) -> Int {
        try AuthFiles.withLock(in: directory) { () throws(AuthStoreError) -> Int in
            let contents = try load()
            guard !contents.codes.isEmpty else { return 0 }
            try save(Contents())
            return contents.codes.count
        }
    }

    private func digest(_ code: String) -> [UInt8] {
        Sodium.hmacSHA256(Array(code.utf8), key: key)
    }

    private func load() throws(AuthStoreError) -> Contents {
        try AuthFiles.decodeJSON(Contents.self, from: file, shape: #"a pairing-code file ({"codes": [{"hash", "expires"}]})"#)
            ?? Contents()
    }

    private func save(_ contents: Contents) throws(AuthStoreError) {
        try AuthFiles.encodeJSON(contents, to: file)
    }
}
