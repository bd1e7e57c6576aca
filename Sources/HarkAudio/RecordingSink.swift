/// An in-memory `AudioSink` that keeps everything written to it: the test double for a speaker.
public final class RecordingSink: AudioSink {
    public let format: PCMFormat
    /// Everything written, in order.
    public private(set) var recorded: PCMBuffer
    /// How many times `write` succeeded.
    public private(set) var writeCount = 0
    /// How many times `drain` was called.
    public private(set) var drainCount = 0

    public init(format: PCMFormat = .speech) {
        self.format = format
        recorded = PCMBuffer(format: format)
    }

    /// Appends `buffer`; refuses audio in another format, as a real device would.
    public func write(_ buffer: PCMBuffer) throws {
        guard buffer.format == format else { throw PCMFormatError(expected: format, actual: buffer.format, context: "recording sink") }
        recorded.append(buffer)
        writeCount += 1
    }

    public func drain() { drainCount += 1 }

    /// Forgets what was recorded and the counts.
    public func reset() {
        recorded = PCMBuffer(format: format)
        writeCount = 0
        drainCount = 0
    }
}
