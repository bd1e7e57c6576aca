#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import HarkAppliance

/// The file handling behind `AuthService`: a private directory, the secret created once with 0600
/// permissions, JSON files replaced atomically, and a lock file that serialises read-modify-write across
/// processes (`hark pair` writes codes the running server consumes).
enum AuthFiles {
    /// Creates `directory` (mode 0700) if it is missing, tightens it to 0700 if others could enter it; fails if the
    /// path exists and is not a directory.
    static func ensureDirectory(_ directory: URL) throws(AuthStoreError) {
        if let problem = PrivateFiles.ensureDirectory(directory) {
            throw AuthStoreError(subject: directory.path, message: problem == "exists but is not a directory" ? problem : "could not create the directory: \(problem)")
        }
    }

    /// Reads the secret at `file`, creating it with `count` random bytes first if it does not exist.
    ///
    /// Creation writes a temporary file (mode 0600 from `mkstemp`), syncs it, then `link`s it into place:
    /// `link` fails if the name exists, so two processes starting at once never see a half-written secret,
    /// and the loser simply reads the winner's. A secret that group or others can read or write is refused:
    /// anyone who can read it can forge tokens.
    static func loadOrCreateSecret(_ file: URL, count: Int) throws(AuthStoreError) -> [UInt8] {
        if !FileManager.default.fileExists(atPath: file.path) {
            let random: [UInt8]
            do { random = try Sodium.randomBytes(count) } catch { throw AuthStoreError(subject: file.path, message: error.description) }
            let temporary = try writeTemporary(Data(random), besides: file)
            defer { unlink(temporary) }
            if link(temporary, file.path) != 0, errno != EEXIST {
                throw AuthStoreError(subject: file.path, message: "could not create the secret: \(errnoText())")
            }
        }
        let fd = open(file.path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { throw AuthStoreError(subject: file.path, message: "could not open the secret: \(errnoText())") }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw AuthStoreError(subject: file.path, message: "could not stat the secret: \(errnoText())") }
        guard info.st_mode & S_IFMT == S_IFREG else { throw AuthStoreError(subject: file.path, message: "is not a regular file") }
        let permissions = info.st_mode & 0o777
        guard permissions & 0o077 == 0 else {
            throw AuthStoreError(subject: file.path, message: "the token secret is accessible to group or others (mode \(String(permissions, radix: 8, uppercase: false).leftPadded(to: 4))); "
                                 + "it must be private to its owner: chmod 600 \(file.path) (or delete it to make a new secret, which signs out every client)")
        }
        var secret = [UInt8](repeating: 0, count: count + 1)
        let got = secret.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard got >= 0 else { throw AuthStoreError(subject: file.path, message: "could not read the secret: \(errnoText())") }
        guard got == count else {
            throw AuthStoreError(subject: file.path, message: "the token secret should be \(count) bytes, found \(got > count ? "more" : "\(got)"); "
                                 + "delete it to make a new one (every client will have to pair or log in again)")
        }
        return Array(secret.prefix(count))
    }

    /// The contents of `file`, or nil if it does not exist.
    static func contents(of file: URL) throws(AuthStoreError) -> Data? {
        guard FileManager.default.fileExists(atPath: file.path) else { return nil }
        do {
            return try Data(contentsOf: file)
        } catch {
            throw AuthStoreError(subject: file.path, message: "could not read: \(error.localizedDescription)")
        }
    }

    /// `file` decoded as JSON, or nil if it does not exist; `shape` (what the file should look like) goes
    /// into the error when it cannot be decoded.
    static func decodeJSON<T: Decodable>(_ type: T.Type, from file: URL, shape: String) throws(AuthStoreError) -> T? {
        guard let data = try contents(of: file) else { return nil }
        do {
            return try JSONDecoder().decode(type, from: data)
        } catch {
            throw AuthStoreError(subject: file.path, message: "is not \(shape): \(error)")
        }
    }

    /// Writes `value` as pretty, key-sorted JSON with `writeAtomically`.
    static func encodeJSON(_ value: some Encodable, to file: URL) throws(AuthStoreError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let data: Data
        do { data = try encoder.encode(value) } catch { throw AuthStoreError(subject: file.path, message: "could not encode: \(error)") }
        try writeAtomically(data, to: file)
    }

    /// Replaces `file` with `data` atomically (a synced temporary file with mode 0600, then `rename`), so a
    /// reader in another process sees the old contents or the new, never a torn file.
    static func writeAtomically(_ data: Data, to file: URL) throws(AuthStoreError) {
        let temporary = try writeTemporary(data, besides: file)
        if rename(temporary, file.path) != 0 {
            let why = errnoText()
            unlink(temporary)
            throw AuthStoreError(subject: file.path, message: "could not replace the file: \(why)")
        }
    }

    /// Runs `body` holding an exclusive `flock` on `directory/.lock`. `flock` locks belong to the open file
    /// description, so this excludes other processes and other threads of this one alike.
    static func withLock<T>(in directory: URL, _ body: () throws(AuthStoreError) -> T) throws(AuthStoreError) -> T {
        let path = directory.appendingPathComponent(".lock").path
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw AuthStoreError(subject: path, message: "could not open the lock file: \(errnoText())") }
        defer { close(fd) }  // closing releases the lock
        while flock(fd, LOCK_EX) != 0 {
            guard errno == EINTR else { throw AuthStoreError(subject: path, message: "could not lock: \(errnoText())") }
        }
        return try body()
    }

    /// Writes `data` to a new `mkstemp` file (mode 0600) next to `file`, synced; returns its path.
    private static func writeTemporary(_ data: Data, besides file: URL) throws(AuthStoreError) -> String {
        var template = Array((file.deletingLastPathComponent().path + "/." + file.lastPathComponent + ".XXXXXX").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else { throw AuthStoreError(subject: file.path, message: "could not create a temporary file: \(errnoText())") }
        let temporary = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        var failure: String?
        let bytes = [UInt8](data)
        var written = 0
        while written < bytes.count, failure == nil {
            let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + written, $0.count - written) }
            if n > 0 { written += n } else if n < 0, errno != EINTR { failure = "could not write: \(errnoText())" }
        }
        if failure == nil, fchmod(fd, 0o600) != 0 { failure = "could not set mode 0600: \(errnoText())" }
        if failure == nil, fsync(fd) != 0 { failure = "could not sync: \(errnoText())" }
        close(fd)
        if let failure {
            unlink(temporary)
            throw AuthStoreError(subject: file.path, message: failure)
        }
        return temporary
    }

    private static func errnoText() -> String {
        String(cString: strerror(errno))
    }
}

private extension String {
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
