import Foundation
import HarkCore

/// One `hark` subcommand.
protocol Command: Sendable {
    static var name: String { get }
    static var abstract: String { get }
    /// The usage text shown by `hark NAME --help` and after a usage error.
    static var usage: String { get }
    /// Runs with the arguments after the command name; returns the exit code.
    static func run(_ args: inout Arguments) throws -> Int32
}

/// Writes a line to standard error (Swift 6 forbids touching the C `stderr` global directly).
func printError(_ message: String) {
    Output.write(message + "\n", to: STDERR_FILENO)
}

/// Standard output, one write per line (so JSON Lines reach a pipe's reader as they happen).
enum Output {
    static func line(_ s: String) {
        write(s + "\n", to: STDOUT_FILENO)
    }

    /// The whole of `text` with `write(2)`, resumed after a signal or a partial write; any other failure
    /// loses the line (a pipe whose reader has gone still raises `SIGPIPE`, as before). Foundation's
    /// `FileHandle.write` copied each line into `Data` and went through its own locks: a visible share of a
    /// `/message` turn under load, whose events are printed as they happen.
    static func write(_ text: String, to descriptor: Int32) {
        var text = text
        text.withUTF8 { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = Glibc.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                if written > 0 {
                    offset += written
                } else if written < 0 && errno == EINTR {
                    continue
                } else {
                    return
                }
            }
        }
    }
}

/// The default workspace, `Intents/home.json`, found where the other shipped files are (`SpeechCLI.repositoryFile`:
/// the working directory, the checkout above the executable, or `/usr/share/hark` when installed).
func defaultWorkspacePath() -> String {
    SpeechCLI.repositoryFile("Intents/home.json")?.path ?? "Intents/home.json"
}

/// Loads a workspace, printing its warnings to stderr; a bad workspace becomes a data error (exit 65).
func loadWorkspace(_ path: String?, quiet: Bool = false) throws -> Workspace {
    let p = path ?? defaultWorkspacePath()
    do {
        let ws = try Workspace.load(from: URL(fileURLWithPath: p))
        if !quiet {
            for w in ws.warnings { printError("warning: \(p): \(w)") }
            if !EnglishLexicon.shared.isAvailable { printError("warning: \(EnglishLexicon.shared.source)") }
        }
        return ws
    } catch {
        throw CommandFailure(message: error.description, exitCode: 65)
    }
}
