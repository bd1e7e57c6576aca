import Foundation

/// The users and their Argon2id password hashes in `users.json`: `{"users": {"NAME": {"password": "$argon2id$…"}}}`.
///
/// Read afresh on every login, so `hark passwd` takes effect in a running server at once; written under the
/// directory's lock with an atomic rename, so concurrent `hark passwd` runs do not lose each other's changes.
struct AuthUserStore: Sendable {
    struct User: Codable {
        /// A `crypto_pwhash_str` string.
        var password: String
    }

    struct Contents: Codable {
        var users: [String: User] = [:]
    }

    let directory: URL
    let file: URL

    init(directory: URL) {
        self.directory = directory
        self.file = directory.appendingPathComponent("users.json")
    }

    /// The password hash of every user, by name.
    func load() throws(AuthStoreError) -> [String: String] {
        try read().users.mapValues(\.password)
    }

    /// Sets `user`'s hash; returns true if the user is new.
    func setHash(_ hash: String, for user: String) throws(AuthStoreError) -> Bool {
        try AuthFiles.withLock(in: directory) { () throws(AuthStoreError) -> Bool in
            var contents = try read()
            let isNew = contents.users[user] == nil
            contents.users[user] = User(password: hash)
            try AuthFiles.encodeJSON(contents, to: file)
            return isNew
        }
    }

    private func read() throws(AuthStoreError) -> Contents {
        try AuthFiles.decodeJSON(Contents.self, from: file, shape: #"a users file ({"users": {"NAME": {"password": "$argon2id$…"}}})"#)
            ?? Contents()
    }
}
