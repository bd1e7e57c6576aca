import Testing
import Foundation
@testable import HarkAudio

@Suite struct ResamplerTests {
    @Test func convertsRateAndChannelsKeepingTheSignal() throws {
        // One second of a 440 Hz tone at 8 kHz stereo (the channels equal) → 16 kHz mono.
        let frames = 8_000
        var samples = [Int16]()
        for i in 0..<frames {
            let value = Int16(10_000 * sin(2 * Double.pi * 440 * Double(i) / 8_000))
            samples.append(value); samples.append(value)
        }
        let input = PCMBuffer(format: PCMFormat(sampleRate: 8_000, channels: 2), samples: samples)
        let output = try input.converted(to: .speech)
        #expect(output.format == .speech)
        #expect(abs(output.frameCount - 16_000) <= 16)
        // Zero crossings per second stay ≈ 2 × 440.
        var crossings = 0
        for i in 1..<output.samples.count where (output.samples[i - 1] < 0) != (output.samples[i] < 0) { crossings += 1 }
        #expect(abs(crossings - 880) < 20)
    }

    @Test func rejectsAnImpossibleRate() {
        #expect(throws: SpeexError.self) { try Resampler(from: 0, to: 16_000, channels: 1) }
    }
}
