/// An `AudioSink` that writes a file progressively through libsndfile (WAV by default; FLAC or raw by
/// extension). The WAV header is rewritten after every write, on `drain()` and when the sink is released,
/// so the file is valid at every point, even if the process stops without closing it.
/// The corresponding C functions are `sf_open`, `sf_writef_short`, `sf_write_sync` and `sf_close`.
public final class AudioFileSink: AudioSink {
    public let format: PCMFormat
    public let path: String
    /// Frames written so far.
    public private(set) var framesWritten = 0
    private let file: SoundFile

    /// Creates (or replaces) `path`, which will hold audio in `format`.
    public init(path: String, format: PCMFormat) throws(SndfileError) {
        file = try SoundFile(writing: path, format: format)
        file.updateHeaderAfterEveryWrite()
        self.path = path
        self.format = format
    }

    public func write(_ buffer: PCMBuffer) throws {
        guard buffer.format == format else { throw PCMFormatError(expected: format, actual: buffer.format, context: path) }
        try file.write(buffer.samples)
        framesWritten += buffer.frameCount
    }

    /// Flushes the samples and the header to disk.
    public func drain() throws { file.sync() }
}
