import Testing
import Foundation
@testable import HarkAudio

@Suite struct NoiseSuppressorTests {
    /// Feeds `audio` in uneven blocks and flushes, as a stream would.
    static func run(_ suppressor: NoiseSuppressor, on audio: PCMBuffer, block: Int = 500) throws -> PCMBuffer {
        let source = BufferedAudioSource(audio)
        var out = PCMBuffer(format: .speech)
        while let buffer = source.read(maxFrames: block) { out.append(try suppressor.process(buffer)) }
        out.append(suppressor.flush())
        return out
    }

    @Test func whiteNoiseLosesMostOfItsEnergy() throws {
        let noise = AudioFixtures.noise(frames: 16_000 * 4, amplitude: 3_000, seed: 41)
        let out = try Self.run(try NoiseSuppressor(), on: noise)
        #expect(out.frameCount == noise.frameCount)
        // After the first second (the noise estimate settling), compare levels.
        let before = AudioFixtures.rms(noise.samples.dropFirst(16_000))
        let after = AudioFixtures.rms(out.samples.dropFirst(16_000))
        let reduction = 20 * log10(before / max(after, 1))
        #expect(reduction > 10, "only \(reduction) dB quieter")
        // More suppression asked for, more removed.
        var gentle = NoiseSuppressor.Configuration()
        gentle.suppression = 6
        let mild = try Self.run(try NoiseSuppressor(configuration: gentle), on: noise)
        #expect(AudioFixtures.rms(mild.samples.dropFirst(16_000)) > after)
    }

    @Test func speechKeepsItsLengthAndMostOfItsEnergy() throws {
        let url = try #require(try AudioFixtures.speechClips(1).first)
        let clip = try AudioFile.readSpeech(url.path)
        let noisy = AudioFixtures.mix(clip, AudioFixtures.noise(frames: clip.frameCount, amplitude: 300, seed: 42))
        let out = try Self.run(try NoiseSuppressor(), on: noisy, block: 333)
        #expect(out.frameCount == noisy.frameCount)
        // The speech core stays within a few dB; the noise-only part after it drops.
        let region = EndpointerTests.loudRegion(clip)
        let speechIn = AudioFixtures.rms(noisy.samples[region])
        let speechOut = AudioFixtures.rms(out.samples[region])
        #expect(abs(20 * log10(speechOut / speechIn)) < 3)
        let tail = (region.upperBound + 16_000)..<noisy.frameCount
        try #require(tail.count > 8_000)
        #expect(AudioFixtures.rms(out.samples[tail]) < AudioFixtures.rms(noisy.samples[tail]) / 3)
    }

    @Test func streamingAcrossBufferBoundariesMatchesOneCall() throws {
        let noise = AudioFixtures.noise(frames: 16_000, amplitude: 2_000, seed: 43)
        let whole = try NoiseSuppressor().process(noise)
        let streamed = try Self.run(try NoiseSuppressor(), on: noise, block: 77)
        #expect(Array(streamed.samples.prefix(whole.frameCount)) == whole.samples)
    }

    @Test func refusesAnotherFormat() throws {
        let suppressor = try NoiseSuppressor()
        #expect(throws: PCMFormatError.self) { try suppressor.process(AudioFixtures.silence(seconds: 0.1, format: PCMFormat(sampleRate: 48_000, channels: 2))) }
        var bad = NoiseSuppressor.Configuration()
        bad.frameLength = 0
        #expect(throws: SpeexError.self) { try NoiseSuppressor(configuration: bad) }
    }
}
