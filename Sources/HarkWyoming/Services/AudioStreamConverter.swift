import HarkAudio

/// The audio format an `audio-start` announces: `rate` Hz, `width` bytes per sample (signed little-endian,
/// as `audioop` reads it), `channels` interleaved.
public struct WyomingAudioFormat: Sendable, Equatable, CustomStringConvertible {
    public var rate: Int
    public var width: Int
    public var channels: Int

    public static let rates = 1_000...192_000
    public static let widths = 1...4
    public static let channelCounts = 1...8

    public init(rate: Int, width: Int, channels: Int) {
        self.rate = rate
        self.width = width
        self.channels = channels
    }

    public var description: String { "rate \(rate), width \(width), channels \(channels)" }

    /// Bytes per frame (one sample of every channel).
    public var frameBytes: Int { width * channels }
}

/// Turns a Wyoming audio stream of any rate, width and channel count into 16 kHz mono 16-bit PCM (what the
/// recogniser and the wake spotter take): samples narrowed to 16 bits, channels averaged, then libspeexdsp's
/// streaming resampler. Bytes of a frame split across chunks are carried to the next chunk.
/// Not Sendable: it owns the resampler; one stream, one thread.
final class AudioStreamConverter {
    let format: WyomingAudioFormat
    private let resampler: Resampler?
    private var carried: [UInt8] = []

    init(format: WyomingAudioFormat) throws(SpeexError) {
        self.format = format
        resampler = format.rate == PCMFormat.speech.sampleRate ? nil : try Resampler(from: format.rate, to: PCMFormat.speech.sampleRate, channels: 1)
    }

    /// The 16 kHz mono audio of `bytes` (and of any bytes carried from the previous chunk).
    func convert(_ bytes: [UInt8]) throws(SpeexError) -> PCMBuffer {
        var input = carried
        input.append(contentsOf: bytes)
        let frames = input.count / format.frameBytes
        carried = Array(input[(frames * format.frameBytes)...])
        var mono = [Int16](repeating: 0, count: frames)
        let width = format.width
        let channels = format.channels
        input.withUnsafeBufferPointer { raw in
            for frame in 0..<frames {
                var sum = 0
                for channel in 0..<channels {
                    let at = (frame * channels + channel) * width
                    // The most significant 16 bits of each sample (8-bit samples are signed, as audioop reads them).
                    let sample: Int16 = switch width {
                    case 1: Int16(Int8(bitPattern: raw[at])) << 8
                    case 2: Int16(bitPattern: UInt16(raw[at]) | UInt16(raw[at + 1]) << 8)
                    default: Int16(bitPattern: UInt16(raw[at + width - 2]) | UInt16(raw[at + width - 1]) << 8)
                    }
                    sum += Int(sample)
                }
                mono[frame] = Int16(sum / channels)
            }
        }
        let buffer = PCMBuffer(format: PCMFormat(sampleRate: format.rate, channels: 1), samples: mono)
        return try resampler?.process(buffer) ?? buffer
    }

    /// The resampler's held-back tail, at the end of the stream.
    func finish() throws(SpeexError) -> PCMBuffer {
        carried.removeAll()
        return try resampler?.process(PCMBuffer(format: PCMFormat(sampleRate: format.rate, channels: 1)), last: true) ?? PCMBuffer(format: .speech)
    }
}
