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
}
