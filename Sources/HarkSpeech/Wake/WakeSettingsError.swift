/// Why wake-phrase settings could not be loaded: the file, its JSON, or one field, named.
public enum WakeSettingsError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file could not be read.
    case unreadable(path: String, reason: String)
    /// Not a JSON object.
    case malformed(source: String, reason: String)
    /// A field with the wrong type or a value out of range: which field, what it must be, what it was.
    case invalidField(source: String, field: String, expected: String, got: String)
    /// A field the settings do not have (a typo would otherwise be a silently ignored setting).
    case unknownField(source: String, field: String, known: [String])
    /// The wake verifier's model file (`WakeVerifier`) could not be read or does not fit this build.
    case badVerifier(source: String, reason: String)

    public var description: String {
        switch self {
        case let .unreadable(path, reason):
            return "\(path): cannot read wake-phrase settings: \(reason)"
        case let .malformed(source, reason):
            return "\(source): wake-phrase settings are not a JSON object: \(reason)"
        case let .invalidField(source, field, expected, got):
            return "\(source): field '\(field)' must be \(expected), got \(got)"
        case let .unknownField(source, field, known):
            return "\(source): unknown field '\(field)' (known: \(known.joined(separator: ", ")); fields starting with '_' are comments)"
        case let .badVerifier(source, reason):
            return "\(source): wake verifier model: \(reason)"
        }
    }
}
