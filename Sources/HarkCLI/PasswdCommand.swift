#if canImport(Glibc)
import Glibc
#endif
import Foundation
import HarkServer

/// `hark passwd USER`: create a user of the companion app's login, or change their password.
enum PasswdCommand: Command {
    static let name = "passwd"
    static let abstract = "Set a user's password for the companion app's login"
    static let usage = """
        USAGE: hark passwd USER [--data DIR]

        Creates USER or changes their password for POST /api/login. The password is read from standard
        input: typed twice without echo on a terminal, otherwise the first line (e.g. from a pipe); at least
        \(AuthService.minimumPasswordLength) characters. It is stored as an Argon2id hash in DIR/auth/users.json,
        and a running server uses it at once.
          --data DIR   the data directory (default $HARK_DATA, else $XDG_DATA_HOME/hark, else
                       ~/.local/share/hark)
        """

    static func run(_ args: inout Arguments) throws -> Int32 {
        let data = try args.option("--data")
        let positionals = try args.positionals()
        try args.finish()
        guard positionals.count == 1, let user = positionals.first else {
            throw UsageError(message: positionals.isEmpty ? "which user? (hark passwd USER)" : "one user at a time, got \(positionals.count)")
        }
        do throws(AuthStoreError) {
            try AuthService.checkUserName(user)
        } catch {
            throw UsageError(message: error.description)
        }

        let password = try readPassword(for: user)
        do throws(AuthStoreError) {
            try AuthService.checkPassword(password)
        } catch {
            throw CommandFailure(message: error.description, exitCode: 65)
        }

        let auth = try openAuthService(data: data)
        let created: Bool
        do throws(AuthStoreError) {
            created = try auth.setPassword(user: user, password: password)
        } catch {
            throw CommandFailure(message: error.description)
        }
        Output.line(created ? "created user \(user) (\(auth.usersFile.path))" : "changed the password of \(user) (\(auth.usersFile.path))")
        return 0
    }

    /// From a terminal: prompted on stderr, twice, echo off. Otherwise: the first line of standard input.
    private static func readPassword(for user: String) throws -> String {
        guard isatty(STDIN_FILENO) == 1 else {
            guard let line = readLine(strippingNewline: true) else {
                throw CommandFailure(message: "no password on standard input (give it as the first line)", exitCode: 65)
            }
            return line
        }
        let first = try TerminalEcho.withEchoOff { try prompt("New password for \(user): ") }
        let second = try TerminalEcho.withEchoOff { try prompt("Again: ") }
        guard first == second else { throw CommandFailure(message: "the two passwords differ; nothing changed", exitCode: 65) }
        return first
    }

    private static func prompt(_ text: String) throws -> String {
        FileHandle.standardError.write(Data(text.utf8))
        let line = readLine(strippingNewline: true)
        FileHandle.standardError.write(Data("\n".utf8))  // the user's Enter was not echoed
        guard let line else { throw CommandFailure(message: "no password typed", exitCode: 65) }
        return line
    }
}

/// Turns the terminal's echo off while a password is typed, and back on afterwards — also if the user
/// presses Ctrl-C, which would otherwise leave their shell without echo.
private enum TerminalEcho {
    /// The settings to restore. A global because a C signal handler cannot capture context; written once
    /// before the handlers are installed, only read afterwards.
    nonisolated(unsafe) static var saved = termios()

    static func withEchoOff<T>(_ body: () throws -> T) throws -> T {
        guard tcgetattr(STDIN_FILENO, &saved) == 0 else {
            throw CommandFailure(message: "cannot read the terminal's settings: \(String(cString: strerror(errno)))")
        }
        var quiet = saved
        quiet.c_lflag &= ~tcflag_t(ECHO)
        let restoreAndExit: @convention(c) (Int32) -> Void = { signal in
            tcsetattr(STDIN_FILENO, TCSANOW, &TerminalEcho.saved)
            _exit(128 + signal)
        }
        let previousInt = Glibc.signal(SIGINT, restoreAndExit)
        let previousTerm = Glibc.signal(SIGTERM, restoreAndExit)
        defer {
            tcsetattr(STDIN_FILENO, TCSANOW, &saved)
            _ = Glibc.signal(SIGINT, previousInt)
            _ = Glibc.signal(SIGTERM, previousTerm)
        }
        guard tcsetattr(STDIN_FILENO, TCSANOW, &quiet) == 0 else {
            throw CommandFailure(message: "cannot turn the terminal's echo off: \(String(cString: strerror(errno)))")
        }
        return try body()
    }
}
