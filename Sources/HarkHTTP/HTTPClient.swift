import COpenSSL
import Foundation
import HarkCore

/// A server's answer to `HTTPClient.request`.
public struct HTTPClientResponse: Sendable {
    public var status: Int
    /// Header names in lower case.
    public var headers: [String: String]
    public var body: [UInt8]

    /// The body as JSON, or an error naming the request.
    public func json(_ what: String) throws(ClientError) -> JSONValue {
        do { return try JSONValue.parse(Data(body)) } catch {
            throw ClientError("\(what): the answer is not JSON (\(status), \(body.count) bytes)", status: status)
        }
    }

    /// The `error.message` of a Hark error answer, else the status line's meaning.
    public var errorMessage: String {
        if let value = try? JSONValue.parse(Data(body)), let message = value["error"]?["message"]?.stringValue { return message }
        return "HTTP \(status)"
    }
}

/// Plain HTTP/1.1 requests to another Hark server (one connection each, `Connection: close`), over
/// `ClientStream` — TLS with a pinned certificate for `https`. Used by `hark link` and the appliance as a
/// member of another appliance's rooms; small JSON requests only (answers over 4 MiB are refused).
public enum HTTPClient {
    public static let maximumResponseBytes = 4 << 20

    /// One request. `pin` is the SHA-256 of the server's certificate (required for https unless
    /// `allowUnpinned`); `certificate` receives the certificate's SHA-256 when there was TLS.
    public static func request(
        _ address: ServerAddress, method: String, path: String, token: String? = nil, json: JSONValue? = nil,
        pin: [UInt8]?, allowUnpinned: Bool = false, timeout: Double = 10, certificate: ((([UInt8]) -> Void))? = nil
    ) throws(ClientError) -> HTTPClientResponse {
        let stream = try ClientStream(address, pin: pin, allowUnpinned: allowUnpinned, timeout: timeout)
        defer { stream.close() }
        if let hash = stream.certificateSHA256 { certificate?(hash) }
        let body = json.map { $0.serializedBytes() } ?? []
        var head = "\(method) \(path) HTTP/1.1\r\nHost: \(address.hostHeader)\r\nConnection: close\r\nAccept: application/json\r\n"
        if let token { head += "Authorization: Bearer \(token)\r\n" }
        if json != nil { head += "Content-Type: application/json\r\n" }
        if json != nil || method == "POST" { head += "Content-Length: \(body.count)\r\n" }
        head += "\r\n"
        try stream.write(Array(head.utf8) + body)
        var reader = ResponseReader(stream: stream, deadline: Date().addingTimeInterval(timeout), what: "\(method) \(path) on \(address)")
        let (status, headers) = try reader.head()
        let content: [UInt8]
        if headers["transfer-encoding"]?.lowercased().contains("chunked") == true {
            content = try reader.chunked()
        } else if let length = headers["content-length"].flatMap({ Int($0) }) {
            guard length <= maximumResponseBytes else { throw ClientError("\(reader.what): the answer is too large (\(length) bytes)") }
            content = try reader.exactly(length)
        } else {
            content = try reader.toEnd()
        }
        return HTTPClientResponse(status: status, headers: headers, body: content)
    }
}

/// Reads an HTTP/1.1 response head and body off a stream, with one deadline for all of it.
struct ResponseReader {
    let stream: ClientStream
    let deadline: Date
    let what: String
    /// Bytes read and not yet consumed.
    var buffer: [UInt8] = []

    init(stream: ClientStream, deadline: Date, what: String, buffered: [UInt8] = []) {
        self.stream = stream
        self.deadline = deadline
        self.what = what
        self.buffer = buffered
    }

    /// More bytes into `buffer`; false at the end of the stream.
    mutating func fill() throws(ClientError) -> Bool {
        let left = deadline.timeIntervalSinceNow
        guard left > 0, let bytes = try stream.read(wait: left) else { throw ClientError("\(what): no answer in time") }
        buffer += bytes
        guard buffer.count <= HTTPClient.maximumResponseBytes + 65_536 else { throw ClientError("\(what): the answer is too large") }
        return !bytes.isEmpty
    }

    /// The status and the headers (names in lower case); the body's first bytes stay in `buffer`.
    mutating func head() throws(ClientError) -> (Int, [String: String]) {
        let end: [UInt8] = Array("\r\n\r\n".utf8)
        while true {
            if let at = Self.find(end, in: buffer) {
                let text = String(decoding: buffer[0..<at], as: UTF8.self)
                buffer.removeFirst(at + 4)
                var lines = text.components(separatedBy: "\r\n")
                let statusLine = lines.removeFirst().split(separator: " ", maxSplits: 2)
                guard statusLine.count >= 2, statusLine[0].hasPrefix("HTTP/1."), let status = Int(statusLine[1]) else {
                    throw ClientError("\(what): not an HTTP answer")
                }
                var headers: [String: String] = [:]
                for line in lines {
                    guard let colon = line.firstIndex(of: ":") else { continue }
                    headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                }
                return (status, headers)
            }
            guard buffer.count < 65_536 else { throw ClientError("\(what): the answer's head is too large") }
            guard try fill() else { throw ClientError("\(what): the connection closed before an answer") }
        }
    }

    mutating func exactly(_ count: Int) throws(ClientError) -> [UInt8] {
        while buffer.count < count {
            guard try fill() else { throw ClientError("\(what): the answer was cut short") }
        }
        let out = Array(buffer[0..<count])
        buffer.removeFirst(count)
        return out
    }

    mutating func toEnd() throws(ClientError) -> [UInt8] {
        while try fill() {}
        defer { buffer = [] }
        return buffer
    }

    mutating func chunked() throws(ClientError) -> [UInt8] {
        var out = [UInt8]()
        let crlf: [UInt8] = [13, 10]
        while true {
            while Self.find(crlf, in: buffer) == nil {
                guard try fill() else { throw ClientError("\(what): the answer was cut short") }
            }
            let at = Self.find(crlf, in: buffer)!
            let sizeText = String(decoding: buffer[0..<at], as: UTF8.self).split(separator: ";").first ?? ""
            guard let size = Int(sizeText.trimmingCharacters(in: .whitespaces), radix: 16), size >= 0 else { throw ClientError("\(what): a malformed chunk") }
            buffer.removeFirst(at + 2)
            if size == 0 { return out }
            guard out.count + size <= HTTPClient.maximumResponseBytes else { throw ClientError("\(what): the answer is too large") }
            out += try exactly(size)
            _ = try exactly(2)
        }
    }

    static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for i in 0...(haystack.count - needle.count) where haystack[i] == needle[0] {
            if Array(haystack[i..<i + needle.count]) == needle { return i }
        }
        return nil
    }
}
