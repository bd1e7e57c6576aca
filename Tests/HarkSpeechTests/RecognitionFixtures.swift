import Foundation
import HarkAudio

/// Test data for the recogniser: the shared benchmark recordings (found by walking up from the package root,
/// since a worktree sits deeper than the main checkout) and a minimal reader for their 16-bit PCM files.
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

    struct ReadError: Error, CustomStringConvertible {
        var description: String
    }

    /// Raw signed 16-bit little-endian 16 kHz mono samples.
    static func raw(_ url: URL) throws -> PCMBuffer {
        let data = try Data(contentsOf: url)
        return PCMBuffer(format: .speech, samples: samples(data[...]))
    }

    /// A 16-bit PCM WAV file: walks the RIFF chunks to `fmt ` and `data` (tests only; HarkAudio reads files
    /// for the product).
    static func wav(_ url: URL) throws -> PCMBuffer {
        let data = try Data(contentsOf: url)
        let bytes = [UInt8](data)
        guard bytes.count >= 12, String(decoding: bytes[0..<4], as: UTF8.self) == "RIFF" else { throw ReadError(description: "\(url.path): not a RIFF file") }
        func u32(_ i: Int) -> Int { Int(bytes[i]) | Int(bytes[i + 1]) << 8 | Int(bytes[i + 2]) << 16 | Int(bytes[i + 3]) << 24 }
        func u16(_ i: Int) -> Int { Int(bytes[i]) | Int(bytes[i + 1]) << 8 }
        var i = 12
        var format: PCMFormat?
        while i + 8 <= bytes.count {
            let id = String(decoding: bytes[i..<(i + 4)], as: UTF8.self)
            let size = u32(i + 4)
            let body = i + 8
            if id == "fmt " {
                guard u16(body + 14) == 16 else { throw ReadError(description: "\(url.path): not 16-bit PCM") }
                format = PCMFormat(sampleRate: u32(body + 4), channels: u16(body + 2))
            } else if id == "data", let format {
                let end = min(bytes.count, body + size)
                return PCMBuffer(format: format, samples: samples(data[(data.startIndex + body)..<(data.startIndex + end)]))
            }
            i = body + size + (size & 1)
        }
        throw ReadError(description: "\(url.path): no fmt/data chunk")
    }

    static func samples(_ data: Data.SubSequence) -> [Int16] {
        let count = data.count / 2
        var out = [Int16](repeating: 0, count: count)
        data.withUnsafeBytes { raw in
            for k in 0..<count { out[k] = Int16(bitPattern: UInt16(raw[2 * k]) | UInt16(raw[2 * k + 1]) << 8) }
        }
        return out
    }
}
