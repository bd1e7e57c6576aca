/// What is wrong with the bytes a client sent, naming the field and the limit. `isFatal` errors leave the
/// stream unsynchronised (the server cannot tell where the next header starts), so the connection is closed
/// after the error event; the others cost only the one event.
public enum WyomingProtocolError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No newline within the header limit.
    case headerTooLong(limit: Int)
    /// The header line is not JSON (the parser's message).
    case headerNotJSON(String)
    /// The header is JSON but not an object.
    case headerNotObject(String)
    /// A header field is missing or has the wrong type or value.
    case badHeaderField(field: String, expected: String, got: String)
    /// `data_length` or `payload_length` is over its limit.
    case tooLarge(field: String, length: Int, limit: Int)
    /// The data after the header is not a JSON object (the stream stays in step: its length was known).
    case badData(String)

    public var isFatal: Bool {
        if case .badData = self { return false }
        return true
    }

    /// The `code` of the error event.
    public var code: String {
        switch self {
        case .headerTooLong: "header-too-long"
        case .headerNotJSON, .headerNotObject, .badHeaderField: "bad-header"
        case .tooLarge(let field, _, _): field == "data_length" ? "data-too-large" : "payload-too-large"
        case .badData: "bad-data"
        }
    }

    public var description: String {
        switch self {
        case .headerTooLong(let limit):
            "header line longer than \(limit) bytes without a newline (a Wyoming header is one line of JSON)"
        case .headerNotJSON(let message):
            "header line is not JSON: \(message)"
        case .headerNotObject(let type):
            "header line is a JSON \(type), expected an object like {\"type\": \"describe\"}"
        case .badHeaderField(let field, let expected, let got):
            "header field \"\(field)\": expected \(expected), got \(got)"
        case .tooLarge(let field, let length, let limit):
            "header field \"\(field)\": \(length) bytes is over this server's limit of \(limit)"
        case .badData(let message):
            "data: \(message)"
        }
    }
}
