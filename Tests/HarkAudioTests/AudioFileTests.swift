import Testing
import Foundation
@testable import HarkAudio
import HarkTestSupport

@Suite struct AudioFileTests {
    @Test(arguments: ["wav", "flac", "raw"])
    func writeThenReadGivesTheSameSamples(_ ext: String) throws {
        let dir = try AudioFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let format = ext == "raw" ? PCMFormat.speech : PCMFormat(sampleRate: 22_050, channels: 2)
        let original = AudioFixtures.noise(frames: 12_345, amplitude: 20_000, seed: 7, format: format)
        let path = dir.appendingPathComponent("round-trip.\(ext)").path
        try AudioFile.write(original, to: path)
        let back = try AudioFile.read(path)
        #expect(back.format == format)
        #expect(back.samples == original.samples)
    }

    @Test func eightKilohertzStereoIsConvertedToSpeech() throws {
        let dir = try AudioFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let stereo = PCMFormat(sampleRate: 8_000, channels: 2)
        let path = dir.appendingPathComponent("phone.wav").path
        try AudioFile.write(AudioFixtures.tone(frequency: 300, seconds: 1, amplitude: 8_000, format: stereo), to: path)
        let speech = try AudioFile.readSpeech(path)
        #expect(speech.format == .speech)
        #expect(abs(speech.frameCount - 16_000) <= 32)
        // The tone survives: RMS of a sine is amplitude / √2.
        #expect(abs(AudioFixtures.rms(speech.samples.dropFirst(1_000).dropLast(1_000)) - 8_000 / 2.0.squareRoot()) < 400)
    }

    @Test func readsTheHeaderlessRecordingAsSixteenKilohertzMono() throws {
        let path = AudioFixtures.goForward.path
        try #require(FileManager.default.fileExists(atPath: path), "benchmark data missing at \(path)")
        let buffer = try AudioFile.read(path)
        let bytes = try #require(FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        #expect(buffer.format == .speech)
        #expect(buffer.frameCount == bytes / 2)
        // The raw bytes are little-endian samples: the first one matches.
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(buffer.samples[100] == Int16(bitPattern: UInt16(data[200]) | UInt16(data[201]) << 8))
        let slower = try AudioFile.read(path, rawFormat: PCMFormat(sampleRate: 8_000, channels: 1))
        #expect(slower.format.sampleRate == 8_000 && slower.samples == buffer.samples)
    }

    @Test func aMissingFileIsNamed() throws {
        let path = "/tmp/hark-no-such-dir-\(UUID().uuidString)/speech.wav"
        let error = try #require(caught(SndfileError.self) { try AudioFile.read(path) })
        #expect(error.kind == .missingFile)
        #expect(error.description.contains(path))
        #expect(error.description.contains("no such file"))
    }

    @Test func randomBytesAreNotAudio() throws {
        let dir = try AudioFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("corrupt.wav").path
        // Seeded noise as bytes: random, yet the same every run.
        let bytes = AudioFixtures.noise(frames: 2_048, amplitude: 32_767, seed: 99).samples.flatMap {
            [UInt8(truncatingIfNeeded: $0), UInt8(truncatingIfNeeded: $0 >> 8)]
        }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let error = try #require(caught(SndfileError.self) { try AudioFile.read(path) })
        #expect(error.kind == .notAudio)
        #expect(error.description.contains(path))
        #expect(error.description.contains("not a recognised audio file"))
    }

    @Test func anEmptyFileAndAHeaderOnlyFileContainNoAudio() throws {
        let dir = try AudioFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let empty = dir.appendingPathComponent("empty.wav").path
        #expect(FileManager.default.createFile(atPath: empty, contents: Data()))
        let headerOnly = dir.appendingPathComponent("header-only.wav").path
        try AudioFile.write(PCMBuffer(format: .speech), to: headerOnly)
        // A link to an empty file is judged by the file, not by the link's own size.
        let linked = dir.appendingPathComponent("linked.wav").path
        try FileManager.default.createSymbolicLink(atPath: linked, withDestinationPath: empty)
        for path in [empty, headerOnly, linked] {
            let error = try #require(caught(SndfileError.self) { try AudioFile.read(path) })
            #expect(error.kind == .noAudio)
            #expect(error.description.contains(path))
            #expect(error.description.contains("contains no audio"))
        }
    }

    @Test func writingAnUnknownExtensionIsUnsupported() throws {
        let path = "/tmp/hark-\(UUID().uuidString).mp3"
        let error = try #require(caught(SndfileError.self) { try AudioFile.write(AudioFixtures.silence(seconds: 0.1), to: path) })
        #expect(error.kind == .unsupported)
        #expect(error.description.contains(path))
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test func fileSourceReadsInBlocksAndConverts() throws {
        let dir = try AudioFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let stereo = PCMFormat(sampleRate: 44_100, channels: 2)
        let original = AudioFixtures.tone(frequency: 440, seconds: 1.5, amplitude: 10_000, format: stereo)
        let path = dir.appendingPathComponent("tone.flac").path
        try AudioFile.write(original, to: path)

        let native = try AudioFileSource(path: path)
        #expect(native.format == stereo)
        var nativeSamples = [Int16]()
        while let block = try native.read(maxFrames: 1_000) {
            #expect(block.frameCount <= 1_000)
            nativeSamples += block.samples
        }
        #expect(nativeSamples == original.samples)

        let speech = try AudioFileSource(path: path, convertingTo: .speech)
        var converted = PCMBuffer(format: .speech)
        while let block = try speech.read(maxFrames: 320) {
            #expect(block.format == .speech && block.frameCount <= 320)
            converted.append(block)
        }
        let whole = try original.converted(to: .speech)
        #expect(abs(converted.frameCount - whole.frameCount) <= 2)
        #expect(abs(AudioFixtures.rms(converted.samples) - AudioFixtures.rms(whole.samples)) < 100)
    }

    @Test func fileSinkWritesAReadableWAVProgressively() throws {
        let dir = try AudioFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("sink.wav").path
        let first = AudioFixtures.noise(frames: 4_000, amplitude: 5_000, seed: 1)
        let second = AudioFixtures.noise(frames: 3_000, amplitude: 5_000, seed: 2)
        let sink = try AudioFileSink(path: path, format: .speech)
        try sink.write(first)
        try sink.drain()
        // Readable while still open: the header already counts the first block.
        #expect(try AudioFile.read(path).samples == first.samples)
        try sink.write(second)
        #expect(throws: PCMFormatError.self) { try sink.write(AudioFixtures.silence(seconds: 0.1, format: PCMFormat(sampleRate: 8_000, channels: 1))) }
        try sink.drain()
        #expect(sink.framesWritten == 7_000)
        #expect(try AudioFile.read(path).samples == first.samples + second.samples)
    }
}
