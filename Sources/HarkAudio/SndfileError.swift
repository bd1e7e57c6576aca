import CSndfile

/// An error from libsndfile, or a file it was given that holds no usable audio: the file, the C function,
/// its code and a readable message.
public struct SndfileError: Error, CustomStringConvertible, Sendable {
    /// What went wrong, so callers can tell a missing file from a bad one without parsing the message.
    public enum Kind: Sendable, Equatable {
        /// The path names no file.
        case missingFile
        /// The bytes are not in any format libsndfile knows (or the file is truncated or malformed).
        case notAudio
        /// The file is valid but holds zero frames.
        case noAudio
        /// A format, encoding, extension or shape Hark cannot read or write.
        case unsupported
        /// Anything else: permissions, a full disk, a failed write.
        case failed
    }

    public var kind: Kind
    /// The file the operation was about.
    public var path: String
    /// The libsndfile function that failed, or the step that found the problem.
    public var function: String
    /// libsndfile's error code (`SF_ERR_*`), or -1 when the problem was found by Hark.
    public var code: Int32
    /// What is wrong, in words.
    public var message: String

    public init(kind: Kind, path: String, function: String, code: Int32, message: String) {
        self.kind = kind
        self.path = path
        self.function = function
        self.code = code
        self.message = message
    }

    public var description: String { "\(path): \(message) (\(function), code \(code))" }

    /// The error libsndfile reports for `file` (or for the last failed `sf_open` when `file` is nil).
    /// The corresponding C functions are `sf_error` and `sf_strerror`.
    static func last(_ file: OpaquePointer?, path: String, function: String) -> SndfileError {
        let code = sf_error(file)
        let library = String(cString: sf_strerror(file))
        let kind: Kind
        let message: String
        switch Int(code) {
        case SF_ERR_UNRECOGNISED_FORMAT, SF_ERR_MALFORMED_FILE:
            kind = .notAudio
            message = "not a recognised audio file: \(library)"
        case SF_ERR_UNSUPPORTED_ENCODING:
            kind = .unsupported
            message = "unsupported audio encoding: \(library)"
        default:
            kind = .failed
            message = library
        }
        return SndfileError(kind: kind, path: path, function: function, code: code, message: message)
    }
}
