import Foundation

/// Paths to test data: the shipped workspaces and the shared benchmark data (`../shared/benchmarks`
/// from the package root; a git worktree may sit deeper, so parent directories are tried too).
enum Fixtures {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static let benchmarks: URL = {
        let relative = "shared/benchmarks"
        var dir = packageRoot
        for _ in 0..<3 {
            dir = dir.deletingLastPathComponent()
            let candidate = dir.appendingPathComponent(relative)
            if FileManager.default.fileExists(atPath: candidate.path) { return candidate }
        }
        return packageRoot.deletingLastPathComponent().appendingPathComponent(relative)
    }()

    static let watsonWorkspaces = benchmarks.appendingPathComponent("watson-workspaces")
    static func watson(_ name: String) -> URL { watsonWorkspaces.appendingPathComponent("\(name).json") }
    static let home = packageRoot.appendingPathComponent("Intents/home.json")
}
