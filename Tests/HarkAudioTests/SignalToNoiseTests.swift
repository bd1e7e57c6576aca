import Foundation
import Testing

@testable import HarkAudio

@Suite("Signal-to-noise estimate")
struct SignalToNoiseTests {
    /// Uniform noise with the given RMS level from a fixed linear congruential generator, so the test is repeatable.
    static func noise(count: Int, rms: Double, seed: UInt64 = 1) -> [Double] {
        var state = seed
        // A uniform distribution on [-a, a] has RMS a / √3.
        let a = rms * 3.0.squareRoot()
        return (0..<count).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return (Double(state >> 11) / Double(1 << 53) * 2 - 1) * a
        }
    }

    /// 3 s: 0.6 s of noise, 1.8 s of a 440 Hz tone of `amplitude` over the noise, 0.6 s of noise.
    static func utterance(amplitude: Double, noiseRMS: Double) -> [Int16] {
        let n = 48_000
        let background = noise(count: n, rms: noiseRMS)
        return (0..<n).map { i in
            let speech = (9_600..<38_400).contains(i) ? amplitude * sin(2 * Double.pi * 440 * Double(i) / 16_000) : 0
            return Int16(clamping: Int((speech + background[i]).rounded()))
        }
    }

    @Test("A tone over steady noise reads as the ratio of tone-plus-noise power to noise power",
          arguments: [(1_000.0, 100.0), (1_000.0, 300.0), (3_000.0, 30.0)])
    func toneOverNoise(amplitude: Double, noiseRMS: Double) throws {
        let expected = 10 * log10((amplitude * amplitude / 2 + noiseRMS * noiseRMS) / (noiseRMS * noiseRMS))
        let estimate = try #require(SignalToNoise.estimate(Self.utterance(amplitude: amplitude, noiseRMS: noiseRMS)))
        // The quiet tenth is a little below the mean noise power (frame powers scatter), so the estimate reads high.
        #expect(estimate > expected - 0.5 && estimate < expected + 1.5, "estimate \(estimate) dB, expected about \(expected) dB")
    }

    @Test("Louder noise under the same speech gives a lower estimate")
    func monotonic() throws {
        let levels = [30.0, 100.0, 300.0, 1_000.0].map { SignalToNoise.estimate(Self.utterance(amplitude: 2_000, noiseRMS: $0)) ?? .nan }
        #expect(zip(levels, levels.dropFirst()).allSatisfy { $0 > $1 + 5 }, "\(levels)")
    }

    @Test("Digital silence around a tone reads as a very high ratio, not infinity")
    func digitalSilence() throws {
        let estimate = try #require(SignalToNoise.estimate(Self.utterance(amplitude: 1_000, noiseRMS: 0)))
        #expect(estimate > 60 && estimate.isFinite)
    }

    @Test("Under ten 25 ms frames there is no estimate")
    func tooShort() {
        #expect(SignalToNoise.estimate([Int16](repeating: 100, count: 3_999)) == nil)
        #expect(SignalToNoise.estimate([]) == nil)
        #expect(SignalToNoise.estimate([Int16](repeating: 100, count: 4_000)) != nil)
    }
}
