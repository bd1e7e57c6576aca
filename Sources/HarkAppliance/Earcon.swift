import Foundation
import HarkAudio

/// The short sounds the appliance makes without words.
public enum Earcon {
    /// "I'm listening": two rising tones (660 Hz then 880 Hz, 70 ms each), soft, with 5 ms fades so
    /// the speaker does not click.
    public static func listening(format: PCMFormat) -> PCMBuffer {
        tones([(660, 0.07), (880, 0.07)], amplitude: 0.25, format: format)
    }

    static func tones(_ tones: [(hertz: Double, seconds: Double)], amplitude: Double, format: PCMFormat) -> PCMBuffer {
        let rate = Double(format.sampleRate)
        var mono: [Int16] = []
        for tone in tones {
            let count = Int(tone.seconds * rate)
            let fade = max(1, Int(0.005 * rate))
            for i in 0..<count {
                let envelope = min(1, Double(i) / Double(fade), Double(count - 1 - i) / Double(fade))
                let x = amplitude * envelope * sin(2 * Double.pi * tone.hertz * Double(i) / rate)
                mono.append(Int16((x * 32_767).rounded()))
            }
        }
        let samples = format.channels == 1 ? mono : mono.flatMap { Array(repeating: $0, count: format.channels) }
        return PCMBuffer(format: format, samples: samples)
    }
}
