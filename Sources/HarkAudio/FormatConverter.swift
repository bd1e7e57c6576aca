/// Streaming conversion between two PCM formats: channels averaged down (or mono copied up), the rate
/// converted by one `Resampler` kept across buffers so block edges leave no clicks. `PCMBuffer.converted(to:)`
/// does the same for a whole buffer at once.
final class FormatConverter {
    let input: PCMFormat
    let output: PCMFormat
    private let resampler: Resampler?

    init(from input: PCMFormat, to output: PCMFormat) throws(SpeexError) {
        self.input = input
        self.output = output
        resampler = input.sampleRate == output.sampleRate
            ? nil : try Resampler(from: input.sampleRate, to: output.sampleRate, channels: 1)
    }

    /// Converts the next block of the stream; `last` flushes the resampler's delay.
    func process(_ buffer: PCMBuffer, last: Bool = false) throws(SpeexError) -> PCMBuffer {
        if input == output { return buffer }
        var mono = buffer.downmixed()
        if let resampler { mono = try resampler.process(mono, last: last) }
        guard output.channels > 1 else { return mono }
        var samples = [Int16]()
        samples.reserveCapacity(mono.samples.count * output.channels)
        for sample in mono.samples { for _ in 0..<output.channels { samples.append(sample) } }
        return PCMBuffer(format: output, samples: samples)
    }
}
