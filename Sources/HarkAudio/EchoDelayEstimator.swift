import Foundation

/// How long the appliance's own sound takes to come back into its microphone: the audio buffers' latency plus
/// the air, the "bulk delay" in front of the room's reflections. `EchoCanceller` delays its far end by it, so
/// its adaptive filter spends its whole tail on the room instead of on silence before the echo arrives
/// (docs/rooms.md, "Echo cancellation": aligned, the long kitchen path reaches 25 dB about a second sooner).
///
/// Method: both signals are decimated to 4 kHz (a 4-sample average); a linear predictor (order 12, fitted to the
/// played window) whitens both with the same filter, which leaves the echo path between them unchanged but
/// flattens the speech's spectrum, so their cross-correlation over the lags 0…`maximumLag` looks like the echo
/// path itself: silence, then the direct sound and the reflections. The onset, the first lag whose correlation
/// reaches half the largest, is the delay; it errs early (towards the filter's safe side) rather than late.
/// An estimate is kept only when the played window has sound (RMS at least `minimumPlayedRMS`), the largest
/// normalised correlation is at least `minimumCorrelation` and stands `minimumProminence` times above the
/// median over all lags: without an echo (a headset) the largest of two thousand lags is 4 to 10 times the
/// median, with one mostly 10 to 90 times (bench/aec.py's signals).
public struct EchoDelayEstimator: Sendable {
    public struct Estimate: Sendable, Equatable {
        /// Where the echo starts, in samples at the input rate.
        public var onset: Int
        /// The lag of the largest correlation, in samples at the input rate.
        public var peak: Int
        /// The largest normalised correlation, 0…1.
        public var correlation: Float
        /// The largest correlation over the median one.
        public var prominence: Float
    }

    /// The input rate's samples per correlation sample.
    public static let decimation = 4
    static let predictorOrder = 12
    public static let minimumCorrelation: Float = 0.1
    public static let minimumProminence: Float = 12
    /// About -55 dBFS.
    public static let minimumPlayedRMS: Float = 60

    /// The longest delay looked for, in samples at the input rate.
    public let maximumLag: Int
    /// How much microphone signal one estimate uses, in samples at the input rate.
    public let window: Int

    public init(maximumLag: Int, window: Int) {
        self.maximumLag = maximumLag
        self.window = window
    }

    /// `microphone`: the last `window` samples captured; `played`: the samples played up to the same moment, from
    /// `window` to `window + maximumLag` of them (so `played.suffix(window)` was played while `microphone` was
    /// captured, and the lags looked at are 0…`played.count - window`). Give only what was really played: silence
    /// put in front of a stream that starts with an offset makes a step that correlates with anything. nil when
    /// the played sound is too quiet or no echo stands out.
    public func estimate(microphone: ArraySlice<Int16>, played: ArraySlice<Int16>) -> Estimate? {
        precondition(microphone.count == window && played.count >= window && played.count <= window + maximumLag,
                     "EchoDelayEstimator: wrong window lengths")
        let d = Self.decimation
        let y = Self.withoutMean(Self.decimate(microphone, by: d))
        let x = Self.withoutMean(Self.decimate(played, by: d))
        guard x.count > y.count else { return nil }
        let energy = x.reduce(Float(0)) { $0 + $1 * $1 }
        guard energy / Float(x.count) >= Self.minimumPlayedRMS * Self.minimumPlayedRMS else { return nil }
        let a = Self.predictor(x, order: Self.predictorOrder)
        let yw = Self.filter(y, a)
        let xw = Self.filter(x, a)
        let n = yw.count
        let lags = xw.count - n
        var r = [Float](repeating: 0, count: lags + 1)
        yw.withUnsafeBufferPointer { yp in
            xw.withUnsafeBufferPointer { xp in
                guard let y0 = yp.baseAddress, let x0 = xp.baseAddress else { return }
                for lag in 0...lags {
                    r[lag] = Self.dot(y0, x0 + (lags - lag), n)
                }
            }
        }
        let ey = yw.reduce(Float(0)) { $0 + $1 * $1 }
        let ex = xw.reduce(Float(0)) { $0 + $1 * $1 } * Float(n) / Float(xw.count)
        let scale = 1 / max((ey * ex).squareRoot(), .leastNormalMagnitude)
        let magnitude = r.map { abs($0) * scale }
        guard let peak = magnitude.indices.max(by: { magnitude[$0] < magnitude[$1] }) else { return nil }
        let largest = magnitude[peak]
        let median = magnitude.sorted()[magnitude.count / 2]
        let prominence = largest / max(median, .leastNormalMagnitude)
        guard largest >= Self.minimumCorrelation, prominence >= Self.minimumProminence else { return nil }
        let onset = magnitude.firstIndex { $0 >= largest / 2 } ?? peak
        return Estimate(onset: onset * d, peak: peak * d, correlation: largest, prominence: prominence)
    }

    /// Σ a[i]·b[i] over `count` samples, eight lanes at a time (the correlation is nearly all of an estimate's cost).
    static func dot(_ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>, _ count: Int) -> Float {
        var lanes = SIMD8<Float>.zero
        var i = 0
        while i + 8 <= count {
            lanes += UnsafeRawPointer(a + i).loadUnaligned(as: SIMD8<Float>.self) * UnsafeRawPointer(b + i).loadUnaligned(as: SIMD8<Float>.self)
            i += 8
        }
        var sum = lanes.sum()
        while i < count {
            sum += a[i] * b[i]
            i += 1
        }
        return sum
    }

    /// The mean of each `factor` samples (a crude low-pass, enough for a delay to a millisecond).
    static func decimate(_ samples: ArraySlice<Int16>, by factor: Int) -> [Float] {
        let count = samples.count / factor
        var out = [Float](repeating: 0, count: count)
        var index = samples.startIndex
        for i in 0..<count {
            var sum: Float = 0
            for _ in 0..<factor {
                sum += Float(samples[index])
                index += 1
            }
            out[i] = sum / Float(factor)
        }
        return out
    }

    static func withoutMean(_ x: [Float]) -> [Float] {
        let mean = x.reduce(Float(0), +) / Float(max(1, x.count))
        return x.map { $0 - mean }
    }

    /// The prediction-error filter 1 + a1 z⁻¹ + … of `x` (autocorrelation method over a Hann window, Levinson–Durbin).
    static func predictor(_ x: [Float], order: Int) -> [Float] {
        let count = x.count
        guard count > order else { return [1] }
        var w = [Float](repeating: 0, count: count)
        for i in 0..<count {
            let hann = 0.5 - 0.5 * cos(2 * Float.pi * Float(i) / Float(count - 1))
            w[i] = x[i] * hann
        }
        var r = [Float](repeating: 0, count: order + 1)
        for k in 0...order {
            var sum: Float = 0
            for i in k..<count { sum += w[i] * w[i - k] }
            r[k] = sum
        }
        guard r[0] > 0 else { return [1] }
        r[0] *= 1.0001  // a little white noise: keeps the recursion stable on very narrow spectra
        var a = [Float](repeating: 0, count: order + 1)
        a[0] = 1
        var error = r[0]
        for i in 1...order {
            var acc = r[i]
            for j in 1..<i { acc += a[j] * r[i - j] }
            let k = -acc / error
            let previous = a
            for j in 1..<i { a[j] = previous[j] + k * previous[i - j] }
            a[i] = k
            error *= 1 - k * k
            if error <= 0 { break }
        }
        return a
    }

    /// `x` through the FIR filter `a` (samples before the start taken as silence).
    static func filter(_ x: [Float], _ a: [Float]) -> [Float] {
        var out = [Float](repeating: 0, count: x.count)
        for i in x.indices {
            var sum: Float = 0
            for k in 0..<min(a.count, i + 1) { sum += a[k] * x[i - k] }
            out[i] = sum
        }
        return out
    }
}
