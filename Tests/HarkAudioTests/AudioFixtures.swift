import Foundation
@testable import HarkAudio

/// Test data: the shared benchmark audio (found upward from the package root, since a worktree may sit
/// deeper than `../shared`), fresh temporary paths, and signal helpers.
enum AudioFixtures {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static let benchmarks: URL = {
        let relative = "shared/benchmarks"
        var dir = packageRoot
        for _ in 0..<4 {
            dir = dir.deletingLastPathComponent()
            let candidate = dir.appendingPathComponent(relative)
            if FileManager.default.fileExists(atPath: candidate.path) { return candidate }
        }
        return packageRoot.deletingLastPathComponent().appendingPathComponent(relative)
    }()

    /// The first `count` clean speech-to-intent clips (16 kHz mono FLAC), in name order so runs repeat.
    static func speechClips(_ count: Int) throws -> [URL] {
        let folder = benchmarks.appendingPathComponent("speech-to-intent/clean")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".flac") }.sorted()
        return names.prefix(count).map { folder.appendingPathComponent($0) }
    }

    static let goForward = benchmarks.appendingPathComponent("recorded-speech/goforward.raw")

    /// A directory under /tmp removed by the caller's `defer`.
    static func temporaryDirectory() throws -> URL {
        let dir = URL(fileURLWithPath: "/tmp/hark-audio-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    /// Deterministic white noise with the given peak amplitude.
    static func noise(frames: Int, amplitude: Int, seed: UInt64, format: PCMFormat = .speech) -> PCMBuffer {
        var state = seed
        var samples = [Int16]()
        samples.reserveCapacity(frames * format.channels)
        for _ in 0..<(frames * format.channels) {
            // SplitMix64: fixed seeds keep every run identical.
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            z ^= z >> 31
            let unit = Double(z >> 11) / Double(1 << 53) * 2 - 1
            samples.append(Int16(unit * Double(amplitude)))
        }
        return PCMBuffer(format: format, samples: samples)
    }

    static func silence(seconds: Double, format: PCMFormat = .speech) -> PCMBuffer {
        PCMBuffer(format: format, samples: [Int16](repeating: 0, count: Int(seconds * Double(format.sampleRate)) * format.channels))
    }

    /// `a + b` sample by sample (clipped); `b` is repeated or cut to `a`'s length.
    static func mix(_ a: PCMBuffer, _ b: PCMBuffer) -> PCMBuffer {
        var out = a
        for i in out.samples.indices {
            let sum = Int(a.samples[i]) + Int(b.samples[i % b.samples.count])
            out.samples[i] = Int16(clamping: sum)
        }
        return out
    }

    static func scaled(_ buffer: PCMBuffer, by gain: Double) -> PCMBuffer {
        PCMBuffer(format: buffer.format, samples: buffer.samples.map { Int16(clamping: Int((Double($0) * gain).rounded())) })
    }

    static func concatenated(_ parts: [PCMBuffer]) -> PCMBuffer {
        var out = PCMBuffer(format: parts.first?.format ?? .speech)
        for part in parts { out.append(part) }
        return out
    }

    /// Root-mean-square level of all samples.
    static func rms(_ samples: some Collection<Int16>) -> Double {
        guard !samples.isEmpty else { return 0 }
        return (samples.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(samples.count)).squareRoot()
    }

    /// A 16-bit tone at `format`, the same in every channel.
    static func tone(frequency: Double, seconds: Double, amplitude: Double, format: PCMFormat) -> PCMBuffer {
        let frames = Int(seconds * Double(format.sampleRate))
        var samples = [Int16]()
        for i in 0..<frames {
            let value = Int16(amplitude * sin(2 * Double.pi * frequency * Double(i) / Double(format.sampleRate)))
            for _ in 0..<format.channels { samples.append(value) }
        }
        return PCMBuffer(format: format, samples: samples)
    }
}
