import Foundation

/// What the wake verifier (`WakeVerifier`) hears of a keyphrase hit: a log-mel spectrogram of the audio
/// around the hit's end, 20 ms frames of 24 bands (docs/wake-phrase.md, "The verifier").
///
/// The frames cover `end - leadSamples ..< end + tailSamples` (1.0 s before the hit's end, 0.12 s after, as
/// `frameCount` frames); the verifier looks at `modelFrames` of them, and its training (scripts/wake/
/// train_verifier.py) at every crop of that length, so an end misplaced by up to 60 ms still looks familiar.
/// Each frame: pre-emphasis 0.97, a 25 ms Hamming window zero-padded to 512 points, the power spectrum, 24
/// triangular mel bands from 100 to 7,600 Hz, the natural log of each band's energy (floored at 1e-8, with
/// samples scaled to ±1). The same code makes the features the verifier was trained on and the ones it
/// judges: `WakeEvaluation` writes them for every hit.
public enum WakeFeatures {
    public static let bands = 24
    public static let frameShift = 320
    public static let windowLength = 400
    public static let fftSize = 512
    /// Frames computed for a hit.
    public static let frameCount = 56
    /// Frames the verifier looks at, starting `modelOffset` frames in.
    public static let modelFrames = 50
    public static let modelOffset = 3
    /// Where the first frame starts, before the hit's end.
    public static let leadSamples = 16_000
    /// Samples after the hit's end the last frame needs.
    public static var tailSamples: Int { (frameCount - 1) * frameShift + windowLength - leadSamples }

    /// The spectrogram of `samples` (exactly `leadSamples + tailSamples` of them; the caller pads), frame-major:
    /// `frameCount × bands` values.
    public static func logMel(_ samples: [Int16]) -> [Float] {
        precondition(samples.count == leadSamples + tailSamples, "WakeFeatures.logMel takes exactly \(leadSamples + tailSamples) samples")
        var output = [Float](repeating: 0, count: frameCount * bands)
        var real = [Double](repeating: 0, count: fftSize)
        var imaginary = [Double](repeating: 0, count: fftSize)
        for frame in 0..<frameCount {
            let start = frame * frameShift
            for i in 0..<fftSize {
                if i < windowLength {
                    let current = Double(samples[start + i]) / 32_768
                    let previous = start + i > 0 ? Double(samples[start + i - 1]) / 32_768 : 0
                    real[i] = (current - 0.97 * previous) * window[i]
                } else {
                    real[i] = 0
                }
                imaginary[i] = 0
            }
            fft(&real, &imaginary)
            for band in 0..<bands {
                var energy = 0.0
                for (bin, weight) in filters[band] {
                    energy += weight * (real[bin] * real[bin] + imaginary[bin] * imaginary[bin])
                }
                output[frame * bands + band] = Float(Foundation.log(max(energy, 1e-8)))
            }
        }
        return output
    }

    static let window: [Double] = (0..<windowLength).map { 0.54 - 0.46 * cos(2 * Double.pi * Double($0) / Double(windowLength - 1)) }

    /// Triangular filters equally spaced on the mel scale (HTK's 2595 log10(1 + f/700)): per band, the FFT
    /// bins it weighs and their weights.
    static let filters: [[(Int, Double)]] = {
        func mel(_ hertz: Double) -> Double { 2595 * log10(1 + hertz / 700) }
        func hertz(_ mel: Double) -> Double { 700 * (pow(10, mel / 2595) - 1) }
        let low = mel(100), high = mel(7_600)
        let edges = (0...(bands + 1)).map { hertz(low + (high - low) * Double($0) / Double(bands + 1)) }
        let binHertz = 16_000.0 / Double(fftSize)
        return (0..<bands).map { band in
            let (left, centre, right) = (edges[band], edges[band + 1], edges[band + 2])
            return (0...(fftSize / 2)).compactMap { bin in
                let f = Double(bin) * binHertz
                let weight = f <= centre ? (f - left) / (centre - left) : (right - f) / (right - centre)
                return weight > 0 ? (bin, weight) : nil
            }
        }
    }()

    /// In-place iterative radix-2 FFT (`real.count` a power of two).
    static func fft(_ real: inout [Double], _ imaginary: inout [Double]) {
        let n = real.count
        var j = 0
        for i in 1..<n {
            var bit = n >> 1
            while j & bit != 0 {
                j ^= bit
                bit >>= 1
            }
            j |= bit
            if i < j {
                real.swapAt(i, j)
                imaginary.swapAt(i, j)
            }
        }
        var length = 2
        while length <= n {
            let angle = -2 * Double.pi / Double(length)
            let (stepReal, stepImaginary) = (cos(angle), sin(angle))
            var start = 0
            while start < n {
                var (wReal, wImaginary) = (1.0, 0.0)
                for k in 0..<(length / 2) {
                    let a = start + k, b = start + k + length / 2
                    let tReal = real[b] * wReal - imaginary[b] * wImaginary
                    let tImaginary = real[b] * wImaginary + imaginary[b] * wReal
                    real[b] = real[a] - tReal
                    imaginary[b] = imaginary[a] - tImaginary
                    real[a] += tReal
                    imaginary[a] += tImaginary
                    (wReal, wImaginary) = (wReal * stepReal - wImaginary * stepImaginary, wReal * stepImaginary + wImaginary * stepReal)
                }
                start += length
            }
            length <<= 1
        }
    }
}
