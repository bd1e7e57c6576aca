import HarkAudio

/// Why speech could not be synthesised or delivered.
public enum SynthesisError: Error, CustomStringConvertible, Sendable {
    /// The text was empty or only whitespace. There is nothing to say, and saying nothing silently would
    /// hide a dialog that produced no reply, so it is an error the caller decides about.
    case emptyText
    /// eSpeak NG has no such voice (or voice variant); `available` lists some that exist.
    case unknownVoice(String, available: [String])
    /// An option outside what eSpeak NG accepts: the option's name, the value and the allowed range.
    case optionOutOfRange(option: String, value: Int, allowed: ClosedRange<Int>)
    /// eSpeak NG itself failed.
    case engine(ESpeakError)
    /// Converting the audio to the sink's sample rate failed.
    case resampling(SpeexError)
    /// The sink rejected audio; the sink's own error.
    case sink(any Error)

    public var description: String {
        switch self {
        case .emptyText:
            return "nothing to say: the text is empty or whitespace only"
        case let .unknownVoice(name, available):
            return "unknown eSpeak NG voice \"\(name)\"; available include \(available.prefix(12).joined(separator: ", "))"
        case let .optionOutOfRange(option, value, allowed):
            return "\(option) \(value) is outside \(allowed.lowerBound)…\(allowed.upperBound)"
        case let .engine(error):
            return error.description
        case let .resampling(error):
            return "resampling speech: \(error)"
        case let .sink(error):
            return "writing speech to the audio sink: \(error)"
        }
    }
}
