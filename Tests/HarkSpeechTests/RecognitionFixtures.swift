import Foundation
import HarkAudio

/// Test data for the recogniser: the shared benchmark recordings (found by walking up from the package root,
/// since a worktree sits deeper than the main checkout).
enum RecognitionFixtures {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static let benchmarks: URL = {
        var dir = packageRoot
        for _ in 0..<3 {
            dir = dir.deletingLastPathComponent()
            let candidate = dir.appendingPathComponent("shared/benchmarks")
            if FileManager.default.fileExists(atPath: candidate.path) { return candidate }
        }
        return packageRoot.deletingLastPathComponent().appendingPathComponent("shared/benchmarks")
    }()

    static let recordedSpeech = benchmarks.appendingPathComponent("recorded-speech")
    static let rhasspy = benchmarks.appendingPathComponent("rhasspy-en")
    static let home = packageRoot.appendingPathComponent("Intents/home.json")

    /// Raw signed 16-bit little-endian 16 kHz mono samples.
    static func raw(_ url: URL) throws -> PCMBuffer { try AudioFile.read(url.path, rawFormat: .speech) }

    /// Any audio file as 16 kHz mono, through HarkAudio's libsndfile reader.
    static func wav(_ url: URL) throws -> PCMBuffer { try AudioFile.readSpeech(url.path) }
}
