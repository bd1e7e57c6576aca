/// Whole-file audio reading and writing through libsndfile: WAV, FLAC and every other format libsndfile
/// knows on the way in, WAV, FLAC or raw (chosen by extension) on the way out, always as 16-bit samples.
///
/// Headerless s16le files (`.raw`, `.pcm`, such as the CMU Sphinx `goforward.raw`) carry no rate: they are
/// read as 16 kHz mono unless a `rawFormat` says otherwise.
public enum AudioFile {
    /// The file's audio at its own rate and channel count.
    ///
    /// - Parameter rawFormat: read the file as headerless s16le in this format. When nil, files named
    ///   `.raw`/`.pcm` are read as headerless 16 kHz mono, others by their header.
    /// - Throws: `SndfileError` naming `path`: `.missingFile`, `.notAudio` ("not a recognised audio file"),
    ///   `.noAudio` ("contains no audio"), `.unsupported`.
    /// The corresponding C functions are `sf_open` and `sf_readf_short`.
    public static func read(_ path: String, rawFormat: PCMFormat? = nil) throws(SndfileError) -> PCMBuffer {
        let file = try SoundFile(reading: path, rawFormat: rawFormat ?? (SoundFile.Container.isRaw(path) ? .speech : nil))
        var samples = [Int16]()
        samples.reserveCapacity(file.frames * file.format.channels)
        while true {
            let block = try file.read(maxFrames: 65_536)
            if block.isEmpty { break }
            samples.append(contentsOf: block)
        }
        guard !samples.isEmpty else {
            throw SndfileError(kind: .noAudio, path: path, function: "sf_readf_short", code: -1,
                               message: "contains no audio (zero frames)")
        }
        return PCMBuffer(format: file.format, samples: samples)
    }

    /// The file's audio as the recogniser wants it: 16 kHz mono, converted from whatever the file holds
    /// (an 8 kHz stereo file is downmixed and resampled, not rejected).
    public static func readSpeech(_ path: String, rawFormat: PCMFormat? = nil) throws -> PCMBuffer {
        try read(path, rawFormat: rawFormat).converted(to: .speech)
    }

    /// Writes `buffer` to `path` (created or replaced) as 16-bit PCM in the container its extension
    /// names: `.wav`, `.flac`, or headerless little-endian `.raw`/`.pcm`.
    /// The corresponding C functions are `sf_open` and `sf_writef_short`.
    public static func write(_ buffer: PCMBuffer, to path: String) throws(SndfileError) {
        let file = try SoundFile(writing: path, format: buffer.format)
        try file.write(buffer.samples)
    }
}
