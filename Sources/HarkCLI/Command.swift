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

/// Writes to standard error (Swift 6 forbids touching the C `stderr` global directly).
func printError(_ message: String) {
    FileHandle.standardError.write(Data((message + "\n").utf8))
}

/// Standard output, one write per line (so JSON Lines reach a pipe's reader as they happen).
enum Output {
    static func line(_ s: String) {
        FileHandle.standardOutput.write(Data((s + "\n").utf8))
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
