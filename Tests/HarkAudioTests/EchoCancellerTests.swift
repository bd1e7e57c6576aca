import Foundation
import Testing
@testable import HarkAudio

/// The echo canceller an appliance in a room uses (docs/rooms.md): it learns a simulated echo path and takes the
/// echo out, and leaves a local voice alone. The ERLE on real speech and longer paths is bench/aec.py's.
@Suite struct EchoCancellerTests {
    /// The microphone's view of `played`: 30 ms later, through a short reflection, at half the level.
    static func echo(of played: [Int16]) -> [Int16] {
        let delay = 480
        return played.indices.map { i in
            let direct = i >= delay ? Double(played[i - delay]) : 0
            let reflection = i >= delay + 200 ? Double(played[i - delay - 200]) : 0
            return Int16(clamping: Int((0.5 * direct + 0.2 * reflection).rounded()))
        }
    }

    static func run(_ canceller: EchoCanceller, microphone: [Int16], played: [Int16], block: Int = 333) throws -> [Int16] {
        var out: [Int16] = []
        var start = 0
        while start < microphone.count {
            let end = min(microphone.count, start + block)
            out += try canceller.process(microphone: PCMBuffer(format: .speech, samples: Array(microphone[start..<end])),
                                         played: PCMBuffer(format: .speech, samples: Array(played[start..<end]))).samples
            start = end
        }
        return out
    }

    /// Real speech played (recorded clips, one after another), its echo in the microphone. speexdsp's filter
    /// adapts on the far end's sound: on speech it converges; on some stationary noises it stalls near 15 dB.
    @Test(arguments: [true, false]) func theEchoOfWhatWasPlayedIsTakenOut(residual: Bool) throws {
        let clips = try AudioFixtures.speechClips(4).map { try AudioFile.readSpeech($0.path) }
        let played = AudioFixtures.concatenated(clips).samples
        try #require(played.count > 16_000 * 6)
        let microphone = Self.echo(of: played)
        var configuration = EchoCanceller.Configuration()
        configuration.residualSuppression = residual
        let out = try Self.run(try EchoCanceller(configuration: configuration), microphone: microphone, played: played)
        #expect(out.count == microphone.count / 160 * 160)
        // The second half, once the filter has converged: the echo's energy over what is left of it.
        let half = (out.count / 2)..<out.count
        let erle = 20 * log10(AudioFixtures.rms(microphone[half]) / max(AudioFixtures.rms(out[half]), 1))
        #expect(erle > (residual ? 25 : 15), "ERLE \(erle) dB")
    }

    @Test func aLocalVoiceWithNothingPlayedPassesThrough() throws {
        let url = try #require(try AudioFixtures.speechClips(1).first)
        let voice = try AudioFile.readSpeech(url.path).samples
        let silence = [Int16](repeating: 0, count: voice.count)
        for residual in [false, true] {
            var configuration = EchoCanceller.Configuration()
            configuration.residualSuppression = residual
            let out = try Self.run(try EchoCanceller(configuration: configuration), microphone: voice, played: silence)
            // The residual suppressor's output is one 10 ms frame late.
            let lag = residual ? 160 : 0
            let a = voice.prefix(out.count - lag).map(Double.init)
            let b = out.dropFirst(lag).map(Double.init)
            let correlation = zip(a, b).reduce(0) { $0 + $1.0 * $1.1 } / (sqrt(a.reduce(0) { $0 + $1 * $1 }) * sqrt(b.reduce(0) { $0 + $1 * $1 }))
            #expect(correlation > 0.95, "residual \(residual): correlation \(correlation)")
        }
    }

    @Test func badInputIsNamed() throws {
        let canceller = try EchoCanceller()
        #expect(throws: EchoCancellerError.unequalLengths(microphone: 320, played: 160)) {
            try canceller.process(microphone: PCMBuffer(format: .speech, samples: [Int16](repeating: 0, count: 320)),
                                  played: PCMBuffer(format: .speech, samples: [Int16](repeating: 0, count: 160)))
        }
        #expect(throws: PCMFormatError.self) {
            try canceller.process(microphone: AudioFixtures.silence(seconds: 0.02, format: PCMFormat(sampleRate: 48_000, channels: 1)),
                                  played: AudioFixtures.silence(seconds: 0.02, format: PCMFormat(sampleRate: 48_000, channels: 1)))
        }
        var bad = EchoCanceller.Configuration()
        bad.tailMilliseconds = 1
        #expect(throws: SpeexError.self) { try EchoCanceller(configuration: bad) }
    }

    /// A room behind deep audio buffers: `delay` samples of nothing, then the direct sound and 40 reflections
    /// (seeded) that decay over about 100 ms, at half the level.
    static func deepEcho(of played: [Int16], delay: Int, seed: UInt64 = 7) -> [Int16] {
        var state = seed
        func random() -> Double {  // xorshift, in 0…1
            state ^= state << 13; state ^= state >> 7; state ^= state << 17
            return Double(state % 1_000_001) / 1_000_000
        }
        let taps = [(0, 1.0)] + (0..<40).map { _ in
            let at = 8 + Int(random() * 1_600)
            return (at, (random() < 0.5 ? -0.6 : 0.6) * exp(-Double(at) / 350))
        }
        var out = [Double](repeating: 0, count: played.count)
        for (at, gain) in taps {
            for i in (delay + at)..<max(delay + at, played.count) { out[i] += gain * Double(played[i - delay - at]) }
        }
        return out.map { Int16(clamping: Int((0.5 * $0).rounded())) }
    }

    /// Continuous read speech (the LibriVox clips bench/aec.py plays as the far end), the first `seconds`.
    static func readSpeech(seconds: Int) throws -> [Int16] {
        let folder = AudioFixtures.benchmarks.appendingPathComponent("recorded-speech")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".wav") }.sorted()
        let clips = try names.map { try AudioFile.readSpeech(folder.appendingPathComponent($0).path) }
        let played = AudioFixtures.concatenated(clips).samples
        try #require(played.count >= 16_000 * seconds)
        return Array(played.prefix(16_000 * seconds))
    }

    /// The delay is found from real speech: its onset a little early, never late (late would put the direct
    /// sound before the filter's start), and nothing is found where there is no echo.
    @Test func theEchoDelayIsFoundAndNothingIsFoundWithoutEcho() throws {
        let played = try Self.readSpeech(seconds: 8)
        let estimator = EchoDelayEstimator(maximumLag: 8_000, window: 16_000)
        for delay in [160, 1_280, 2_400] {  // 10, 80 and 150 ms
            let microphone = Self.deepEcho(of: played, delay: delay)
            var found: [Int] = []
            for end in stride(from: 16_000, through: played.count, by: 8_000) {
                let far = played[max(0, end - 24_000)..<end]
                if let estimate = estimator.estimate(microphone: microphone[(end - 16_000)..<end], played: far) {
                    found.append(estimate.onset)
                    #expect(estimate.onset <= delay + 48, "delay \(delay): onset \(estimate.onset)")
                    #expect(estimate.onset >= delay - 320, "delay \(delay): onset \(estimate.onset)")
                }
            }
            #expect(found.count >= 12, "delay \(delay): \(found.count) estimates of 14")
        }
        // Another voice in the microphone, or only noise: no echo of the played sound stands out.
        let clips = try AudioFixtures.speechClips(8).map { try AudioFile.readSpeech($0.path) }
        let other = Array(AudioFixtures.concatenated(clips).samples.prefix(played.count))
        try #require(other.count == played.count)
        let noise = AudioFixtures.noise(frames: played.count, amplitude: 300, seed: 3).samples
        for microphone in [other, noise] {
            for end in stride(from: 16_000, through: played.count, by: 8_000) {
                let far = played[max(0, end - 24_000)..<end]
                #expect(estimator.estimate(microphone: microphone[(end - 16_000)..<end], played: far) == nil)
            }
        }
        // Nothing played: nothing to measure.
        let silence = [Int16](repeating: 0, count: 24_000)
        #expect(estimator.estimate(microphone: played[0..<16_000], played: silence[...]) == nil)
    }

    /// Behind 150 ms of buffers a 200 ms filter keeps 50 ms for the room: aligned, the canceller covers it all.
    @Test func anEchoBehindDeepBuffersIsCancelledOnceAligned() throws {
        let played = try Self.readSpeech(seconds: 10)
        let microphone = Self.deepEcho(of: played, delay: 2_400)
        let half = 80_000..<160_000
        func erle(_ out: [Int16], _ window: Range<Int> = half) -> Double {
            20 * log10(AudioFixtures.rms(microphone[window]) / max(AudioFixtures.rms(out[window]), 1))
        }
        let aligned = try EchoCanceller()
        let alignedOut = try Self.run(aligned, microphone: microphone, played: played, block: 1_600)
        var off = EchoCanceller.Configuration()
        off.alignment = false
        let unaligned = try EchoCanceller(configuration: off)
        let unalignedOut = try Self.run(unaligned, microphone: microphone, played: played, block: 1_600)
        let delay = try #require(aligned.alignedDelayMilliseconds)
        #expect((125...150).contains(delay), "delay \(delay) ms")
        #expect(try #require(aligned.alignedAtSample) <= 48_000, "aligned after \(aligned.alignedAtSample ?? 0) samples")
        #expect(unaligned.alignedDelayMilliseconds == nil)
        #expect(erle(alignedOut) > 30, "aligned ERLE \(erle(alignedOut)) dB")
        // Converged within 2 s (the goal): the half second after it already at 25 dB.
        let early = 32_000..<40_000
        #expect(erle(alignedOut, early) >= 25, "aligned ERLE \(erle(alignedOut, early)) dB at 2.0–2.5 s")
        #expect(erle(alignedOut) > erle(unalignedOut) + 10, "aligned \(erle(alignedOut)) dB, unaligned \(erle(unalignedOut)) dB")
        // reset forgets the delay.
        aligned.reset()
        #expect(aligned.alignedDelayMilliseconds == nil)
    }

    /// The appliance's live path estimates on another thread (`backgroundEstimation`): `process` does not run the
    /// estimate itself, and an answer taken up by the next block sets the same delay as the synchronous canceller.
    @Test func anEstimateMadeInTheBackgroundSetsTheSameDelay() throws {
        let played = try Self.readSpeech(seconds: 6)
        let microphone = Self.deepEcho(of: played, delay: 2_400)
        var configuration = EchoCanceller.Configuration()
        configuration.backgroundEstimation = true
        let background = try EchoCanceller(configuration: configuration)
        var out: [Int16] = []
        var firstAligned: Int?
        for start in stride(from: 0, to: microphone.count, by: 1_600) {
            let end = min(microphone.count, start + 1_600)
            out += try background.process(microphone: PCMBuffer(format: .speech, samples: Array(microphone[start..<end])),
                                          played: PCMBuffer(format: .speech, samples: Array(played[start..<end]))).samples
            // An estimate started in this block is answered on the worker's thread: the block after takes it up.
            if firstAligned == nil, background.alignedAtSample != nil { firstAligned = end }
            background.waitForEstimate()
        }
        let synchronous = try EchoCanceller()
        _ = try Self.run(synchronous, microphone: microphone, played: played, block: 1_600)
        let delay = try #require(background.alignedDelayMilliseconds)
        #expect(delay == synchronous.alignedDelayMilliseconds, "background \(delay) ms, synchronous \(synchronous.alignedDelayMilliseconds ?? -1) ms")
        // Aligned one block after the synchronous one: the estimate that agreed was answered after its block.
        let lag = try #require(firstAligned) - (try #require(synchronous.alignedAtSample))
        #expect(lag == 1_600, "background aligned \(lag) samples after the synchronous one")
        let window = 48_000..<96_000
        let erle = 20 * log10(AudioFixtures.rms(microphone[window]) / max(AudioFixtures.rms(out[window]), 1))
        #expect(erle > 30, "background ERLE \(erle) dB")
        // A reset drops an answer still to come.
        background.reset()
        background.waitForEstimate()
        #expect(background.alignedDelayMilliseconds == nil)
    }
}
