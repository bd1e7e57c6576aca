import CSpeexDSP

/// An error from libspeexdsp: the C function, its code and the library's message.
public struct SpeexError: Error, CustomStringConvertible, Sendable {
    public var function: String
    public var code: Int32
    public var message: String

    public init(function: String, code: Int32, message: String) {
        self.function = function
        self.code = code
        self.message = message
    }

    public var description: String { "\(function) failed (\(code)): \(message)" }

    static func check(_ code: Int32, _ function: String) throws(SpeexError) {
        guard code != 0 else { return }
        throw SpeexError(function: function, code: code, message: String(cString: speex_resampler_strerror(code)))
    }
}

/// Sample-rate conversion with libspeexdsp's resampler (quality 5, its VoIP default: ~1.5 ms per sentence).
/// Streaming: feed consecutive buffers, pass `last: true` with the final one to flush the filter's delay.
/// The corresponding C functions are `speex_resampler_init` and `speex_resampler_process_interleaved_int`.
public final class Resampler {
    public let inputRate: Int
    public let outputRate: Int
    public let channels: Int
    private let state: OpaquePointer
    /// Whether the filter's tail has been flushed (after which the resampler is spent).
    private var flushed = false

    public init(from inputRate: Int, to outputRate: Int, channels: Int, quality: Int32 = 5) throws(SpeexError) {
        guard inputRate > 0, outputRate > 0, channels > 0 else {
            throw SpeexError(function: "speex_resampler_init", code: -1,
                             message: "invalid conversion \(inputRate) Hz → \(outputRate) Hz with \(channels) channels")
        }
        var error: Int32 = 0
        guard let state = speex_resampler_init(UInt32(channels), UInt32(inputRate), UInt32(outputRate), quality, &error) else {
            try SpeexError.check(error == 0 ? -1 : error, "speex_resampler_init")
            throw SpeexError(function: "speex_resampler_init", code: error, message: "no resampler")
        }
        self.state = state
        self.inputRate = inputRate
        self.outputRate = outputRate
        self.channels = channels
        speex_resampler_skip_zeros(state)
    }

    deinit { speex_resampler_destroy(state) }

    /// Converts `buffer` (at `inputRate`, `channels` channels). With `last`, also flushes the filter's tail.
    public func process(_ buffer: PCMBuffer, last: Bool = false) throws(SpeexError) -> PCMBuffer {
        let outFormat = PCMFormat(sampleRate: outputRate, channels: channels)
        guard buffer.format == PCMFormat(sampleRate: inputRate, channels: channels) else {
            throw SpeexError(function: "speex_resampler_process_interleaved_int", code: -1,
                             message: "expected \(PCMFormat(sampleRate: inputRate, channels: channels)) input, got \(buffer.format)")
        }
        var output = try run(buffer.samples)
        if last && !flushed {
            flushed = true
            let latency = Int(speex_resampler_get_input_latency(state))
            output += try run([Int16](repeating: 0, count: latency * channels))
        }
        return PCMBuffer(format: outFormat, samples: output)
    }

    private func run(_ input: [Int16]) throws(SpeexError) -> [Int16] {
        let inFrames = input.count / channels
        let capacity = inFrames * outputRate / inputRate + 64
        var output = [Int16](repeating: 0, count: capacity * channels)
        var consumed = 0
        var produced = 0
        var code: Int32 = 0
        input.withUnsafeBufferPointer { inPtr in
            output.withUnsafeMutableBufferPointer { outPtr in
                while consumed < inFrames && code == 0 {
                    var inLen = UInt32(inFrames - consumed)
                    var outLen = UInt32(capacity - produced)
                    if outLen == 0 { break }
                    code = speex_resampler_process_interleaved_int(
                        state, inPtr.baseAddress! + consumed * channels, &inLen,
                        outPtr.baseAddress! + produced * channels, &outLen)
                    consumed += Int(inLen)
                    produced += Int(outLen)
                    if inLen == 0 && outLen == 0 { break }
                }
            }
        }
        try SpeexError.check(code, "speex_resampler_process_interleaved_int")
        output.removeLast(output.count - produced * channels)
        return output
    }
}
