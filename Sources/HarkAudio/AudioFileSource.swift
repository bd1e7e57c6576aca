/// An `AudioSource` that reads a file in blocks through libsndfile, optionally converting to a target
/// format on the way (so a 44.1 kHz stereo WAV can feed a 16 kHz mono recogniser without loading it whole).
/// Returns nil once the file (and the resampler's tail) is exhausted.
/// The corresponding C functions are `sf_open` and `sf_readf_short`.
public final class AudioFileSource: AudioSource {
    /// The format of every buffer `read` returns: the target, or the file's own.
    public let format: PCMFormat
    /// The file's own format.
    public let fileFormat: PCMFormat
    public let path: String
    private let file: SoundFile
    private let converter: FormatConverter?
    /// Converted frames not yet handed out (a resampler can return a few more than asked for).
    private var pending: [Int16] = []
    private var fileEnded = false

    /// Opens `path` for reading.
    /// - Parameters:
    ///   - target: convert every block to this format; nil keeps the file's format.
    ///   - rawFormat: as for `AudioFile.read`: headerless s16le in this format (`.raw`/`.pcm` default to 16 kHz mono).
    public init(path: String, convertingTo target: PCMFormat? = nil, rawFormat: PCMFormat? = nil) throws {
        let file = try SoundFile(reading: path, rawFormat: rawFormat ?? (SoundFile.Container.isRaw(path) ? .speech : nil))
        self.file = file
        self.path = path
        fileFormat = file.format
        format = target ?? file.format
        converter = format == file.format ? nil : try FormatConverter(from: file.format, to: format)
    }

    public func read(maxFrames: Int) throws -> PCMBuffer? {
        let channels = format.channels
        guard maxFrames > 0 else { return PCMBuffer(format: format) }
        while pending.count < maxFrames * channels && !fileEnded {
            // Ask the file for about as many frames as the conversion turns into `maxFrames`.
            let want = max(1, maxFrames * fileFormat.sampleRate / format.sampleRate)
            let block = try file.read(maxFrames: want)
            fileEnded = block.isEmpty
            let buffer = PCMBuffer(format: fileFormat, samples: block)
            if let converter {
                pending += try converter.process(buffer, last: fileEnded).samples
            } else {
                pending += block
            }
        }
        if pending.isEmpty && fileEnded { return nil }
        let count = min(pending.count, maxFrames * channels)
        let out = Array(pending.prefix(count))
        pending.removeFirst(count)
        return PCMBuffer(format: format, samples: out)
    }
}
