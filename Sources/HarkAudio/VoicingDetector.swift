import Foundation

/// How strongly the latest audio repeats at a speaking voice's pitch period: the peak normalised
/// cross-correlation over pitch lags, near 1 for a vowel, low for a knock, a clatter of dishes, a fan or hiss.
///
/// The `Endpointer` asks it whether loud audio after the words is still the speaker: in a kitchen the
/// background alone goes 4–14 dB above the noise floor, so the level cannot tell (docs/speech.md, "Voiced
/// speech keeps an utterance going").
///
/// Each frame's audio is band-passed to the range where a voice's fundamental and first harmonics lie (a
/// second-order high-pass at 100 Hz and low-pass at 900 Hz, which also keeps mains hum and a dish's ringing
/// out), decimated to about 8 kHz, and kept as a short history. `strength()` correlates the oldest 20 ms of
/// that history with the audio one pitch period later, for every period of 50–500 Hz, normalised by both
/// stretches' energies, and returns the highest local peak (a peak, not the largest value, so that strongly
/// low-pitched noise, whose correlation simply falls as the lag grows, does not pass for a voice). Cost: about
/// 23,000 multiply-adds per call at 16 kHz, and the endpointer calls it only for frames loud enough to count.
struct VoicingDetector {
    /// One second-order section (RBJ cookbook), direct form I.
    struct Biquad {
        var b0, b1, b2, a1, a2: Double
        var x1 = 0.0, x2 = 0.0, y1 = 0.0, y2 = 0.0

        static func lowPass(_ frequency: Double, sampleRate: Int) -> Biquad { make(frequency, sampleRate, highPass: false) }
        static func highPass(_ frequency: Double, sampleRate: Int) -> Biquad { make(frequency, sampleRate, highPass: true) }

        private static func make(_ frequency: Double, _ sampleRate: Int, highPass: Bool) -> Biquad {
            let omega = 2 * Double.pi * min(frequency, 0.45 * Double(sampleRate)) / Double(sampleRate)
            let alpha = sin(omega) / (2 * 0.5.squareRoot())  // Q = 1/√2: Butterworth
            let c = cos(omega)
            let a0 = 1 + alpha
            let b0 = (highPass ? (1 + c) : (1 - c)) / 2
            let b1 = highPass ? -(1 + c) : (1 - c)
            return Biquad(b0: b0 / a0, b1: b1 / a0, b2: b0 / a0, a1: -2 * c / a0, a2: (1 - alpha) / a0)
        }

        mutating func callAsFunction(_ x: Double) -> Double {
            let y = b0 * x + b1 * x1 + b2 * x2 - a1 * y1 - a2 * y2
            x2 = x1
            x1 = x
            y2 = y1
            y1 = y
            return y
        }
    }

    /// Input samples per kept sample.
    let decimation: Int
    /// Samples (after decimation) correlated at each lag: 20 ms.
    let window: Int
    /// The pitch periods searched, in decimated samples: 500 Hz down to 50 Hz.
    let shortestLag: Int
    let longestLag: Int
    private var highPass: Biquad
    private var lowPass: Biquad
    /// Decimated samples kept: the window at the longest lag, plus one lag either side for the peak test.
    let length: Int
    /// The last `length` decimated samples in a ring whose oldest slot is `next`, stored twice (slot i and
    /// i + `length`), so that `history[next ..< next + length]` is always the history in time order.
    private var history: [Float]
    private var next = 0
    /// Where the next input sample falls in the decimation: kept when 0.
    private var phase = 0

    init(sampleRate: Int) {
        decimation = max(1, sampleRate / 8_000)
        let rate = Double(sampleRate) / Double(decimation)
        window = max(8, Int((0.02 * rate).rounded()))
        shortestLag = max(2, Int(rate / 500))
        longestLag = max(shortestLag + 1, Int(rate / 50))
        highPass = .highPass(100, sampleRate: sampleRate)
        lowPass = .lowPass(900, sampleRate: sampleRate)
        length = window + longestLag + 1
        history = [Float](repeating: 0, count: 2 * length)
    }

    /// Takes the next audio of the stream.
    mutating func push(_ samples: ArraySlice<Int16>) {
        for sample in samples {
            let filtered = lowPass(highPass(Double(sample) / 32_768))
            if phase == 0 {
                history[next] = Float(filtered)
                history[next + length] = Float(filtered)
                next = (next + 1) % length
            }
            phase = (phase + 1) % decimation
        }
    }

    /// The peak normalised correlation at a pitch period over the latest history: in [-1, 1], -1 when no lag
    /// is a local peak (or the audio is digital silence).
    func strength() -> Double { measure().strength }

    /// `strength()` and the pitch period at that peak, in decimated samples, refined between lags by the parabola
    /// through the peak and its neighbours (0 when there is no peak). A voice's period drifts from one 10 ms
    /// frame to the next; a chime's or a ring tone's holds (docs/speech.md, "An utterance needs a voice").
    func measure() -> (strength: Double, period: Double) {
        history.withUnsafeBufferPointer { stored -> (strength: Double, period: Double) in
            // The history in time order, oldest first.
            let x = UnsafeBufferPointer(rebasing: stored[next..<(next + length)])
            var energy0: Float = 0
            for n in 0..<window { energy0 += x[n] * x[n] }
            guard energy0 > 0 else { return (-1, 0) }
            // The energy of x[lag ..< lag + window], slid along as the lag grows.
            let firstLag = shortestLag - 1
            var energyLag: Float = 0
            for n in firstLag..<(firstLag + window) { energyLag += x[n] * x[n] }
            var previous = -2.0, current = -2.0
            var best = -1.0, period = 0.0
            for lag in firstLag...(longestLag + 1) {
                if lag > firstLag {
                    energyLag += x[lag + window - 1] * x[lag + window - 1] - x[lag - 1] * x[lag - 1]
                }
                var product: Float = 0
                for n in 0..<window { product += x[n] * x[n + lag] }
                let denominator = Double(energy0) * Double(max(energyLag, 0))
                let value = denominator > 0 ? Double(product) / denominator.squareRoot() : 0
                // `current` is the value at lag - 1: a peak when no lower than either neighbour.
                if lag - 1 >= shortestLag && lag - 1 <= longestLag && current >= previous && current >= value && current > best {
                    best = current
                    let curvature = previous - 2 * current + value
                    period = Double(lag - 1) + (abs(curvature) > 1e-9 ? 0.5 * (previous - value) / curvature : 0)
                }
                previous = current
                current = value
            }
            return (best, period)
        }
    }
}
