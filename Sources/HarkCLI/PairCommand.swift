import Foundation
import HarkAppliance
import HarkServer

/// `hark pair`: print a one-time pairing code that the companion server (running or not yet) accepts.
enum PairCommand: Command {
    static let name = "pair"
    static let abstract = "Print a one-time code that pairs a phone or browser with the server"
    static let usage = """
        USAGE: hark pair [--data DIR] [--lifetime DURATION]

        Prints a fresh 6-digit pairing code (alone on the first line) and when it expires. Enter it on the
        companion page, or POST /api/pair {"code": "…"}, to get a token; a running `hark serve` or `hark run`
        accepts it at once. Each code works once.
          --data DIR           the data directory (default $HARK_DATA, else $XDG_DATA_HOME/hark, else
                               ~/.local/share/hark); the auth files are in DIR/auth
          --lifetime DURATION  how long the code works: 90s, 5m, 1h (default 5m, at most 1h)
        """

    static func run(_ args: inout Arguments) throws -> Int32 {
        let data = try args.option("--data")
        let lifetime = try args.option("--lifetime", parse: parseDuration, expected: "a duration like 90s, 5m or 1h")
            ?? AuthService.defaultPairingCodeLifetime
        try args.finish()
        guard lifetime > .zero, lifetime <= AuthService.maximumPairingCodeLifetime else {
            throw UsageError(message: "--lifetime: must be more than 0s and at most 1h")
        }

        let auth = try openAuthService(data: data)
        let code: String
        do throws(AuthStoreError) {
            code = try auth.issuePairingCode(lifetime: lifetime)
        } catch {
            throw CommandFailure(message: error.description)
        }
        // The service stamps the expiry from its own clock a moment earlier; printed to the second, they agree.
        let expires = Date().addingTimeInterval(Double(lifetime.components.seconds))
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
        Output.line(code)
        Output.line("expires \(formatter.string(from: expires)) local time (in \(describe(lifetime))); it works once")
        return 0
    }

    /// `90s`, `5m`, `1h`: a whole number and a unit.
    static func parseDuration(_ text: String) -> Duration? {
        guard let unit = text.last, let count = Int64(text.dropLast()), count >= 0 else { return nil }
        switch unit {
        case "s": return .seconds(count)
        case "m": return count <= Int64.max / 60 ? .seconds(count * 60) : nil
        case "h": return count <= Int64.max / 3600 ? .seconds(count * 3600) : nil
        default: return nil
        }
    }

    private static func describe(_ lifetime: Duration) -> String {
        let seconds = lifetime.components.seconds
        if seconds % 3600 == 0 { return "\(seconds / 3600) h" }
        if seconds % 60 == 0 { return "\(seconds / 60) min" }
        return "\(seconds) s"
    }
}

/// The auth service on `--data DIR`'s (or the default data directory's) `auth/`; a problem with its files
/// is a failure naming the file.
func openAuthService(data: String?) throws -> AuthService {
    let directory = data.map { DataDirectory(url: URL(fileURLWithPath: $0, isDirectory: true)) } ?? DataDirectory.default
    do {
        return try AuthService(directory: AuthService.directory(in: directory), tokenLifetime: AuthService.defaultTokenLifetime)
    } catch {
        throw CommandFailure(message: error.description)
    }
}
