import CSndfile
import Foundation

/// An open libsndfile handle, read or written as interleaved 16-bit frames. Shared by `AudioFile`,
/// `AudioFileSource` and `AudioFileSink` so every path opens, checks and closes files the same way.
/// The corresponding C functions are `sf_open`, `sf_readf_short`, `sf_writef_short` and `sf_close`.
final class SoundFile {
    let path: String
    let format: PCMFormat
    /// Frames the header announces (reading); libsndfile's count for raw files.
    let frames: Int
    private let handle: OpaquePointer

    /// How a file is laid out on disk, chosen from its extension when writing.
    enum Container {
        case wav, flac, raw

        /// The container for `path`'s extension, or nil when Hark does not write that kind of file.
        init?(path: String) {
            switch (path as NSString).pathExtension.lowercased() {
            case "wav", "wave": self = .wav
            case "flac": self = .flac
            case "raw", "pcm": self = .raw
            default: return nil
            }
        }

        /// Whether `path` names a headerless file by its extension.
        static func isRaw(_ path: String) -> Bool { Container(path: path) == .raw }

        var sndfileFormat: Int32 {
            switch self {
            case .wav: Int32(SF_FORMAT_WAV | SF_FORMAT_PCM_16)
            case .flac: Int32(SF_FORMAT_FLAC | SF_FORMAT_PCM_16)
            case .raw: Int32(SF_FORMAT_RAW | SF_FORMAT_PCM_16 | SF_ENDIAN_LITTLE)
            }
        }
    }

    /// Opens `path` for reading. With `rawFormat`, the file is read as headerless s16le in that format.
    init(reading path: String, rawFormat: PCMFormat?) throws(SndfileError) {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw SndfileError(kind: .missingFile, path: path, function: "sf_open", code: Int32(SF_ERR_SYSTEM),
                               message: "no such file")
        }
        guard !isDirectory.boolValue else {
            throw SndfileError(kind: .notAudio, path: path, function: "sf_open", code: Int32(SF_ERR_SYSTEM),
                               message: "is a directory, not an audio file")
        }
        // libsndfile calls an empty file "unknown format"; say what it is.
        let target = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        if let size = (try? FileManager.default.attributesOfItem(atPath: target))?[.size] as? Int, size == 0 {
            throw SndfileError(kind: .noAudio, path: path, function: "sf_open", code: -1,
                               message: "contains no audio (the file is empty)")
        }
        var info = SF_INFO()
        if let rawFormat {
            guard rawFormat.sampleRate > 0, rawFormat.channels > 0 else {
                throw SndfileError(kind: .unsupported, path: path, function: "sf_open", code: -1,
                                   message: "unsupported raw format \(rawFormat)")
            }
            info.samplerate = Int32(rawFormat.sampleRate)
            info.channels = Int32(rawFormat.channels)
            info.format = Container.raw.sndfileFormat
        }
        guard let handle = sf_open(path, Int32(SFM_READ), &info) else {
            throw SndfileError.last(nil, path: path, function: "sf_open")
        }
        guard info.samplerate > 0, info.channels > 0 else {
            sf_close(handle)
            throw SndfileError(kind: .unsupported, path: path, function: "sf_open", code: -1,
                               message: "unsupported shape: \(info.samplerate) Hz, \(info.channels) channels")
        }
        guard info.frames > 0 else {
            sf_close(handle)
            throw SndfileError(kind: .noAudio, path: path, function: "sf_open", code: -1,
                               message: "contains no audio (zero frames)")
        }
        self.handle = handle
        self.path = path
        self.format = PCMFormat(sampleRate: Int(info.samplerate), channels: Int(info.channels))
        self.frames = Int(info.frames)
    }

    /// Creates (or truncates) `path` for writing 16-bit audio in `format`, in the container its extension names.
    init(writing path: String, format: PCMFormat) throws(SndfileError) {
        guard let container = Container(path: path) else {
            throw SndfileError(kind: .unsupported, path: path, function: "sf_open", code: -1,
                               message: "unsupported file type '.\((path as NSString).pathExtension)': write .wav, .flac or .raw")
        }
        guard format.sampleRate > 0, format.channels > 0 else {
            throw SndfileError(kind: .unsupported, path: path, function: "sf_open", code: -1,
                               message: "unsupported format \(format)")
        }
        var info = SF_INFO()
        info.samplerate = Int32(format.sampleRate)
        info.channels = Int32(format.channels)
        info.format = container.sndfileFormat
        guard sf_format_check(&info) != 0 else {
            throw SndfileError(kind: .unsupported, path: path, function: "sf_format_check", code: -1,
                               message: "libsndfile cannot write \(format) as \(container)")
        }
        guard let handle = sf_open(path, Int32(SFM_WRITE), &info) else {
            throw SndfileError.last(nil, path: path, function: "sf_open")
        }
        self.handle = handle
        self.path = path
        self.format = format
        self.frames = 0
    }

    deinit { sf_close(handle) }

    /// Up to `maxFrames` frames; an empty array at the end of the file.
    /// The corresponding C function is `sf_readf_short`.
    func read(maxFrames: Int) throws(SndfileError) -> [Int16] {
        guard maxFrames > 0 else { return [] }
        var samples = [Int16](repeating: 0, count: maxFrames * format.channels)
        let got = samples.withUnsafeMutableBufferPointer { sf_readf_short(handle, $0.baseAddress, sf_count_t(maxFrames)) }
        if got < 0 || (got == 0 && sf_error(handle) != 0) {
            throw SndfileError.last(handle, path: path, function: "sf_readf_short")
        }
        samples.removeLast((maxFrames - Int(got)) * format.channels)
        return samples
    }

    /// Appends whole frames. The corresponding C function is `sf_writef_short`.
    func write(_ samples: [Int16]) throws(SndfileError) {
        let frames = samples.count / format.channels
        guard frames > 0 else { return }
        let written = samples.withUnsafeBufferPointer { sf_writef_short(handle, $0.baseAddress, sf_count_t(frames)) }
        guard written == frames else {
            throw SndfileError.last(handle, path: path, function: "sf_writef_short")
        }
    }

    /// Makes the header describe everything written so far, so the file is valid even if the process dies.
    /// The corresponding C functions are `sf_command(SFC_SET_UPDATE_HEADER_AUTO)`.
    func updateHeaderAfterEveryWrite() {
        _ = sf_command(handle, Int32(SFC_SET_UPDATE_HEADER_AUTO), nil, Int32(SF_TRUE))
    }

    /// Flushes written data and the header to disk. The corresponding C function is `sf_write_sync`.
    func sync() {
        _ = sf_command(handle, Int32(SFC_UPDATE_HEADER_NOW), nil, 0)
        sf_write_sync(handle)
    }
}
