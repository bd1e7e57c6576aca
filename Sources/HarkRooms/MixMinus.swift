import Foundation

/// Mix-minus for one room and one 20 ms block: every listener hears the sum of everyone else's audio, never
/// their own. The sum of all is taken once and each listener's own part is subtracted (O(n), not O(n²)),
/// in 32-bit so nothing wraps; a `Limiter` per listener then keeps the result inside 16 bits.
public enum MixMinus {
    /// The mix each listener hears.
    /// - Parameters:
    ///   - inputs: each source's block (nil: no audio from it this block); all blocks are `samples` long.
    ///   - sourceOfListener: for each listener, the index in `inputs` of its own voice (nil: it sends none).
    /// - Returns: one 32-bit block per listener, before limiting.
    public static func mix(inputs: [[Int16]?], listeners sourceOfListener: [Int?], samples: Int) -> [[Int32]] {
        var total = [Int32](repeating: 0, count: samples)
        for case let input? in inputs {
            for i in 0..<min(samples, input.count) { total[i] &+= Int32(input[i]) }
        }
        return sourceOfListener.map { own in
            guard let own, let mine = inputs[own] else { return total }
            var mix = total
            for i in 0..<min(samples, mine.count) { mix[i] &-= Int32(mine[i]) }
            return mix
        }
    }
}

/// Keeps a listener's mix inside 16 bits without hard clipping: when a block would overflow, the gain drops
/// at once to what fits (ramped across the block from the previous gain, so there is no step), and recovers
/// slowly (`release` per block) once the voices quieten. A mix that fits passes through unchanged.
public struct Limiter: Sendable {
    /// The peak a limited block is scaled to (a little headroom below 32767).
    public static let ceiling: Double = 32_000
    /// How much gain comes back per block (about 0.5 s from 0.5 to 1 at 20 ms blocks).
    public var release: Double = 0.02
    public private(set) var gain: Double = 1

    public init() {}

    public mutating func apply(_ mix: [Int32]) -> [Int16] {
        var peak: Int32 = 0
        for sample in mix { peak = max(peak, sample == Int32.min ? Int32.max : abs(sample)) }
        let fits = peak == 0 ? 1 : min(1, Self.ceiling / Double(peak))
        let target = min(fits, gain + release)
        if target >= 1 && gain >= 1 {
            return mix.map { Int16(clamping: $0) }
        }
        let start = min(gain, target)
        let count = max(1, mix.count)
        var out = [Int16](repeating: 0, count: mix.count)
        for (i, sample) in mix.enumerated() {
            // A falling gain reaches the target by the block's peak at the latest: start there if it is lower.
            let g = target < gain ? target : start + (target - start) * Double(i + 1) / Double(count)
            out[i] = Int16(clamping: Int64((Double(sample) * g).rounded()))
        }
        gain = target
        return out
    }
}

/// Whether a member is speaking, by the energy of their blocks with hysteresis: on after two blocks (40 ms)
/// above `onLevel`, off after `hangBlocks` blocks (300 ms) below `offLevel`, so a pause between words does
/// not flicker. Level is the block's RMS on a 60 dB scale: 0 at −60 dBFS or below, 1 at full scale. This is
/// an energy detector, not a speech model: steady loud noise counts as speaking.
public struct VoiceActivity: Sendable {
    public var onLevel = 0.35
    public var offLevel = 0.25
    public var hangBlocks = 15
    public private(set) var speaking = false
    public private(set) var level = 0.0
    private var above = 0
    private var below = 0

    public init() {}

    /// Takes one block; returns its level.
    @discardableResult
    public mutating func update(_ block: [Int16]) -> Double {
        level = Self.level(block)
        if level >= onLevel {
            above += 1
            below = 0
            if above >= 2 { speaking = true }
        } else {
            above = 0
            if level < offLevel { below += 1 } else { below = 0 }
            if below >= hangBlocks { speaking = false }
        }
        return level
    }

    /// RMS in dBFS mapped to 0…1 (−60 dBFS → 0, 0 dBFS → 1).
    public static func level(_ block: [Int16]) -> Double {
        guard !block.isEmpty else { return 0 }
        var energy = 0.0
        for sample in block { energy += Double(sample) * Double(sample) }
        let rms = (energy / Double(block.count)).squareRoot() / 32768
        guard rms > 0 else { return 0 }
        let db = 20 * log10(rms)
        return min(1, max(0, (db + 60) / 60))
    }
}
