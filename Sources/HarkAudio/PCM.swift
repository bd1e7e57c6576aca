/// The shape of interleaved signed 16-bit PCM: sample rate and channel count.
public struct PCMFormat: Sendable, Hashable, CustomStringConvertible {
    public var sampleRate: Int
    public var channels: Int

    public init(sampleRate: Int, channels: Int) {
        self.sampleRate = sampleRate
        self.channels = channels
    }

    /// What the recogniser decodes: 16 kHz, mono.
    public static let speech = PCMFormat(sampleRate: 16_000, channels: 1)

    public var description: String { "\(sampleRate) Hz, \(channels == 1 ? "mono" : "\(channels) channels")" }
}

/// A block of interleaved signed 16-bit samples with its format.
public struct PCMBuffer: Sendable, Equatable {
    public var format: PCMFormat
    /// Interleaved: frame `i`, channel `c` is `samples[i * channels + c]`.
    public var samples: [Int16]

    public init(format: PCMFormat, samples: [Int16] = []) {
        precondition(format.channels > 0 && samples.count % format.channels == 0, "samples must hold whole frames")
        self.format = format
        self.samples = samples
    }

    public var frameCount: Int { samples.count / format.channels }
    public var duration: Double { Double(frameCount) / Double(format.sampleRate) }
    public var isEmpty: Bool { samples.isEmpty }

    public mutating func append(_ other: PCMBuffer) {
        precondition(other.format == format, "appending \(other.format) audio to \(format) audio")
        samples.append(contentsOf: other.samples)
    }

    /// The average of all channels, one sample per frame.
    public func downmixed() -> PCMBuffer {
        let channels = format.channels
        guard channels > 1 else { return self }
        var mono = [Int16](repeating: 0, count: frameCount)
        for frame in 0..<frameCount {
            var sum = 0
            for channel in 0..<channels { sum += Int(samples[frame * channels + channel]) }
            mono[frame] = Int16(sum / channels)
        }
        return PCMBuffer(format: PCMFormat(sampleRate: format.sampleRate, channels: 1), samples: mono)
    }

    /// This audio in `target`'s rate and channel count: channels are averaged down (or a mono signal copied
    /// up), the rate converted with libspeexdsp's resampler.
    public func converted(to target: PCMFormat) throws(SpeexError) -> PCMBuffer {
        if format == target { return self }
        var mono = downmixed()
        if mono.format.sampleRate != target.sampleRate {
            let resampler = try Resampler(from: mono.format.sampleRate, to: target.sampleRate, channels: 1)
            mono = try resampler.process(mono, last: true)
        }
        guard target.channels > 1 else { return mono }
        var out = [Int16]()
        out.reserveCapacity(mono.samples.count * target.channels)
        for sample in mono.samples { for _ in 0..<target.channels { out.append(sample) } }
        return PCMBuffer(format: target, samples: out)
    }
}

/// Where audio comes from: a microphone, a file, memory. Reads block until audio is available.
public protocol AudioSource: AnyObject {
    /// The format every buffer from `read` has.
    var format: PCMFormat { get }
    /// Up to `maxFrames` frames; `nil` when the source has ended (a file's end; a closed device).
    func read(maxFrames: Int) throws -> PCMBuffer?
}

/// Where audio goes: a speaker, a file, memory.
public protocol AudioSink: AnyObject {
    /// The format `write` expects; callers convert with `PCMBuffer.converted(to:)`.
    var format: PCMFormat { get }
    func write(_ buffer: PCMBuffer) throws
    /// Blocks until everything written has been played or stored.
    func drain() throws
}

/// Signed 16-bit samples as the bytes of little-endian PCM (WAV's data, a Wyoming audio chunk, a browser's or
/// another appliance's raw 16 kHz audio), and back.
public enum LittleEndianPCM {
    /// Two bytes per sample, low byte first.
    public static func bytes(_ samples: [Int16]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: samples.count * 2)
        for (i, sample) in samples.enumerated() {
            let bits = UInt16(bitPattern: sample)
            out[2 * i] = UInt8(bits & 0xFF)
            out[2 * i + 1] = UInt8(bits >> 8)
        }
        return out
    }

    /// The samples in `bytes`, two bytes each, low byte first; an odd last byte is not a sample and is ignored.
    public static func samples<Bytes: RandomAccessCollection>(_ bytes: Bytes) -> [Int16] where Bytes.Element == UInt8 {
        var out = [Int16](repeating: 0, count: bytes.count / 2)
        var index = bytes.startIndex
        for i in out.indices {
            let low = UInt16(bytes[index])
            index = bytes.index(after: index)
            out[i] = Int16(bitPattern: low | UInt16(bytes[index]) << 8)
            index = bytes.index(after: index)
        }
        return out
    }
}
