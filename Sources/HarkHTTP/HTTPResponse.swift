import HarkCore

/// An HTTP response: status, headers and the whole body in memory.
public struct HTTPResponse: Sendable, Equatable {
    /// The status code (200, 404, ...).
    public var status: Int
    /// Header values by lower-cased name; `content-length` is added by the server, never taken from here.
    public var headers: [String: String]
    /// The body bytes.
    public var body: [UInt8]

    public init(status: Int, headers: [String: String] = [:], body: [UInt8] = []) {
        self.status = status
        self.headers = Dictionary(headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { _, last in last })
        self.body = body
    }

    /// A body of raw bytes with its content type, e.g. `.bytes(200, "image/jpeg", jpeg)`.
    public static func bytes(_ status: Int, _ contentType: String, _ body: [UInt8]) -> HTTPResponse {
        HTTPResponse(status: status, headers: ["content-type": contentType], body: body)
    }

    /// A JSON body (`application/json; charset=utf-8`), serialised compactly by HarkCore's writer.
    public static func json(_ status: Int, _ value: JSONValue) -> HTTPResponse {
        .bytes(status, "application/json; charset=utf-8", value.serializedBytes())
    }

    /// The API's error shape: `{"error": {"code": "not_found", "message": "..."}}` (docs/server-api.md).
    public static func error(_ status: Int, code: String, message: String) -> HTTPResponse {
        .json(status, ["error": ["code": .string(code), "message": .string(message)]])
    }

    /// The same response with one more header (name lower-cased).
    public func adding(header name: String, value: String) -> HTTPResponse {
        var copy = self
        copy.headers[name.lowercased()] = value
        return copy
    }

    /// `error.message` of a response in the API's error shape, nil otherwise.
    static func errorMessage(in response: HTTPResponse) -> String? {
        guard let json = try? JSONValue.parse(String(decoding: response.body, as: UTF8.self)) else { return nil }
        return json["error"]?["message"]?.stringValue
    }
}
