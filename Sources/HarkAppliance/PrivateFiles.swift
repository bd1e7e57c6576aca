#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// The modes of what the appliance records: the event log and pictures say who was home and what they
/// said, so its directories are 0700 and its files 0600 — private to the user Hark runs as, whatever the
/// umask. Existing ones made by an older Hark (0755, 0644) are tightened when they are opened for writing.
public enum PrivateFiles {
    /// Mode of the data directory, `pictures/` and `auth/`.
    public static let directoryMode: mode_t = 0o700
    /// Mode of `events.sqlite3` (and, through SQLite, its `-wal` and `-shm`), pictures and auth files.
    public static let fileMode: mode_t = 0o600

    /// Creates `directory` (and missing parents) with mode 0700, or tightens an existing one to 0700.
    /// Returns a message naming the directory and the reason when it cannot.
    public static func ensureDirectory(_ directory: URL) -> String? {
        let path = directory.path
        var info = stat()
        if stat(path, &info) != 0 {
            do {
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true,
                                                        attributes: [.posixPermissions: Int(directoryMode)])
            } catch {
                let ns = error as NSError
                if let underlying = ns.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain {
                    return String(cString: strerror(Int32(underlying.code)))
                }
                return ns.localizedDescription
            }
            return tighten(path, to: directoryMode)
        }
        guard info.st_mode & S_IFMT == S_IFDIR else { return "exists but is not a directory" }
        return tighten(path, to: directoryMode)
    }

    /// Creates `file` empty with mode 0600 if it does not exist, or tightens it to 0600 if it does; a
    /// missing file's name is then taken by SQLite, which gives its `-wal` and `-shm` the same mode.
    public static func ensureFile(_ file: URL) -> String? {
        let fd = open(file.path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, fileMode)
        guard fd >= 0 else { return String(cString: strerror(errno)) }
        close(fd)
        return tighten(file.path, to: fileMode)
    }

    /// Tightens `path` to `mode` if it exists and allows more; nil when done or absent.
    @discardableResult
    public static func restrict(_ path: String, to mode: mode_t = fileMode) -> String? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return tighten(path, to: mode)
    }

    /// Why `writeAtomically` failed: the step, the file it concerns (the temporary one, or the target for the
    /// rename) and errno's text.
    public struct WriteFailure: Error, Sendable {
        public enum Step: Sendable { case create, write, flush, rename }
        public var step: Step
        public var path: String
        /// The temporary file written first (gone again after a failure).
        public var temporary: String
        public var reason: String
    }

    /// Writes `bytes` to a hidden temporary file beside `file` (`.NAME` + `temporarySuffix`, mode 0600), `fsync`s it,
    /// renames it over `file`, then `fsync`s the directory: a reader never sees half a file, and a crash leaves the
    /// whole file or none (a stale temporary at most, which its owner can recognise by the suffix).
    public static func writeAtomically(_ bytes: [UInt8], to file: URL, temporarySuffix: String) throws(WriteFailure) {
        let directory = file.deletingLastPathComponent()
        let temporary = directory.appendingPathComponent("." + file.lastPathComponent + temporarySuffix).path
        func failure(_ step: WriteFailure.Step, _ path: String) -> WriteFailure {
            WriteFailure(step: step, path: path, temporary: temporary, reason: String(cString: strerror(errno)))
        }
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, fileMode)
        guard fd >= 0 else { throw failure(.create, temporary) }
        let complete = bytes.withUnsafeBytes { buffer -> Bool in
            var rest = buffer[...]
            while !rest.isEmpty {
                let n = write(fd, UnsafeRawBufferPointer(rebasing: rest).baseAddress, rest.count)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { return false }
                rest = rest.dropFirst(n)
            }
            return true
        }
        guard complete else {
            let error = failure(.write, temporary)
            close(fd)
            unlink(temporary)
            throw error
        }
        guard fsync(fd) == 0 else {
            let error = failure(.flush, temporary)
            close(fd)
            unlink(temporary)
            throw error
        }
        close(fd)
        guard rename(temporary, file.path) == 0 else {
            let error = failure(.rename, file.path)
            unlink(temporary)
            throw error
        }
        let directoryFD = open(directory.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directoryFD >= 0 {
            fsync(directoryFD)
            close(directoryFD)
        }
    }

    private static func tighten(_ path: String, to mode: mode_t) -> String? {
        var info = stat()
        guard stat(path, &info) == 0 else { return String(cString: strerror(errno)) }
        // Only when someone else could read or write: a user who made it stricter still is kept.
        guard info.st_mode & 0o077 != 0 else { return nil }
        // Someone else's (a shared directory given as HARK_DATA): not ours to change, and the open that follows
        // reports any real problem.
        guard info.st_uid == geteuid() else { return nil }
        guard chmod(path, info.st_mode & 0o700 | (mode & 0o700)) == 0 else {
            if errno == EPERM { return nil }
            return "cannot restrict it to mode \(String(mode, radix: 8)): \(String(cString: strerror(errno)))"
        }
        return nil
    }
}
