import Foundation

/// Sounds that are not speech, for the tests of the rule that an utterance needs a voice (docs/speech.md, "An
/// utterance needs a voice"), shared so that the endpointer's tests and the servers' tests judge the same sound.
public enum TestSounds {
    /// A chime: 880 Hz and its octave at 16-bit samples, decaying over 0.4 s; a pitch that holds, as no voice's does.
    public static func chime(seconds: Double, sampleRate: Int = 16_000) -> [Int16] {
        (0..<Int(seconds * Double(sampleRate))).map { i in
            let t = Double(i) / Double(sampleRate)
            return Int16((sin(2 * Double.pi * 880 * t) + 0.5 * sin(2 * Double.pi * 1_760 * t)) * 6_000 * exp(-t / 0.4))
        }
    }
}
