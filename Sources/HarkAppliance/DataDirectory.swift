#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// Where the appliance keeps what it records: `events.sqlite3` (events, turns, picture index) and `pictures/`.
public struct DataDirectory: Sendable, Equatable {
    /// The directory itself.
    public var url: URL

    public init(url: URL) {
        self.url = url.standardizedFileURL
    }

    /// `$HARK_DATA`, else `$XDG_DATA_HOME/hark`, else `$HOME/.local/share/hark`, from this process's environment.
    public static var `default`: DataDirectory {
        let environment = ProcessInfo.processInfo.environment
        return resolve(environment: environment, home: home(environment: environment))
    }

    /// The user's home directory as the XDG rule means it: `$HOME` when it is set to an absolute path, else the
    /// password database's entry for this user. Foundation's `homeDirectoryForCurrentUser` is not used: on
    /// Linux it reads only the password database, so `HOME=/tmp/h hark run` would still write to the real home.
    public static func home(environment: [String: String]) -> URL {
        if let home = environment["HOME"], home.hasPrefix("/") {
            return URL(fileURLWithPath: home, isDirectory: true)
        }
        if let entry = getpwuid(getuid()), let directory = entry.pointee.pw_dir {
            let path = String(cString: directory)
            if path.hasPrefix("/") { return URL(fileURLWithPath: path, isDirectory: true) }
        }
        return FileManager.default.homeDirectoryForCurrentUser
    }

    /// The rule behind `default`, over any environment. Empty variables count as unset; a relative
    /// `XDG_DATA_HOME` is ignored, as the XDG Base Directory specification requires. A relative `HARK_DATA`
    /// is taken relative to the working directory: the user set it on purpose.
    public static func resolve(environment: [String: String], home: URL) -> DataDirectory {
        if let hark = environment["HARK_DATA"], !hark.isEmpty {
            return DataDirectory(url: URL(fileURLWithPath: hark, isDirectory: true))
        }
        if let xdg = environment["XDG_DATA_HOME"], xdg.hasPrefix("/") {
            return DataDirectory(url: URL(fileURLWithPath: xdg, isDirectory: true).appendingPathComponent("hark", isDirectory: true))
        }
        return DataDirectory(url: home.appendingPathComponent(".local/share/hark", isDirectory: true))
    }

    /// The event store: `events.sqlite3`.
    public var eventStoreURL: URL { url.appendingPathComponent("events.sqlite3", isDirectory: false) }

    /// The picture files: `pictures/`.
    public var picturesURL: URL { url.appendingPathComponent("pictures", isDirectory: true) }
}
