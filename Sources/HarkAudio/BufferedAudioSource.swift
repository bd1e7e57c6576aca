/// An in-memory `AudioSource` over one `PCMBuffer`: hands it out in blocks and ends (nil) at its end.
/// The test double for a microphone, and the way to feed already-loaded audio to code that reads a source.
public final class BufferedAudioSource: AudioSource {
    public let format: PCMFormat
    private let buffer: PCMBuffer
    /// The next frame `read` hands out.
    public private(set) var position = 0
    /// How many times `read` was called (including the final nil).
    public private(set) var readCount = 0

    public init(_ buffer: PCMBuffer) {
        self.buffer = buffer
        format = buffer.format
    }

    /// Frames not yet read.
    public var remainingFrames: Int { buffer.frameCount - position }

    public func read(maxFrames: Int) -> PCMBuffer? {
        readCount += 1
        guard remainingFrames > 0 else { return nil }
        let frames = min(max(0, maxFrames), remainingFrames)
        let channels = format.channels
        let slice = buffer.samples[(position * channels)..<((position + frames) * channels)]
        position += frames
        return PCMBuffer(format: format, samples: Array(slice))
    }

    /// Starts again from the first frame.
    public func rewind() { position = 0 }
}
