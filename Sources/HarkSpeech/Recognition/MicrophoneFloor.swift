import HarkCore

/// Gives every utterance what a real microphone always has: a faint noise floor, and a little quiet before
/// and after the speech.
///
/// Synthetic audio (a text-to-speech file, a recording trimmed to the word) has exact digital silence and
/// speech that starts on the first sample and stops on the last. PocketSphinx's front end then finds no
/// silence to anchor the grammar's start and end on: "take a picture" from eSpeak NG ended in "Final result
/// does not match the grammar" and came back as the partial hypothesis "ta", while the same audio with
/// 0.5 s of -56 dBFS noise either side decoded correctly (24/24 home.json commands, three settings).
/// It is added only to audio that lacks a noise floor of its own (`lacksNoiseFloor`): added to real noisy
/// recordings, the 0.4 s of near-silence at each end skewed the whole-utterance CMN and cost accuracy on the
/// speech-to-intent benchmark. It is deterministic (a fixed-seed generator, restarted per utterance), so
/// the same audio decodes the same way.
struct MicrophoneFloor {
    /// Peak amplitude of the added noise: ±40 of 32767 ≈ -58 dBFS.
    static let amplitude: UInt64 = 40
    /// Quiet added before and after the utterance: 0.4 s at 16 kHz.
    static let padding = 6_400

    private var random = SplitMix64(seed: 0x6861_726B)

    /// Whether `samples` has stretches quieter than the floor (digital silence, a synthetic voice): its
    /// quietest 10 ms frame has an RMS level below the floor's peak amplitude.
    static func lacksNoiseFloor(_ samples: [Int16]) -> Bool {
        let frame = 160
        guard samples.count >= frame else { return true }
        var quietest = Double.infinity
        var start = 0
        while start + frame <= samples.count {
            var energy = 0.0
            for i in start..<(start + frame) { energy += Double(samples[i]) * Double(samples[i]) }
            quietest = min(quietest, (energy / Double(frame)).squareRoot())
            start += frame
        }
        return quietest < Double(amplitude)
    }

    /// Restarts the generator, so every utterance gets the same floor.
    mutating func restart() { random = SplitMix64(seed: 0x6861_726B) }

    /// `count` samples of the floor alone.
    mutating func quiet(_ count: Int = padding) -> [Int16] {
        (0..<count).map { _ in sample() }
    }

    /// `samples` with the floor added.
    mutating func adding(to samples: [Int16]) -> [Int16] {
        samples.map { Int16(clamping: Int($0) + Int(sample())) }
    }

    private mutating func sample() -> Int16 {
        Int16(Int(random.next() % (2 * Self.amplitude + 1)) - Int(Self.amplitude))
    }
}
