import Testing
@testable import HarkAudio
import HarkTestSupport

@Suite struct MemoryAudioTests {
    @Test func bufferedSourceHandsOutBlocksThenEnds() {
        let buffer = AudioFixtures.noise(frames: 1_000, amplitude: 1_000, seed: 3, format: PCMFormat(sampleRate: 8_000, channels: 2))
        let source = BufferedAudioSource(buffer)
        var blocks = [PCMBuffer]()
        while let block = source.read(maxFrames: 300) { blocks.append(block) }
        #expect(blocks.map(\.frameCount) == [300, 300, 300, 100])
        #expect(blocks.flatMap(\.samples) == buffer.samples)
        #expect(source.read(maxFrames: 300) == nil)
        source.rewind()
        #expect(source.read(maxFrames: 10_000)?.samples == buffer.samples)
    }

    @Test func recordingSinkKeepsEverythingAndCountsWrites() throws {
        let sink = RecordingSink(format: .speech)
        let a = AudioFixtures.noise(frames: 100, amplitude: 1_000, seed: 4)
        let b = AudioFixtures.noise(frames: 50, amplitude: 1_000, seed: 5)
        try sink.write(a)
        try sink.write(b)
        sink.drain()
        #expect(sink.recorded.samples == a.samples + b.samples)
        #expect(sink.writeCount == 2 && sink.drainCount == 1)
        let error = try #require(caught(PCMFormatError.self) { try sink.write(AudioFixtures.silence(seconds: 0.01, format: PCMFormat(sampleRate: 48_000, channels: 2))) })
        #expect(error.actual.sampleRate == 48_000)
        #expect(sink.writeCount == 2)
    }
}
