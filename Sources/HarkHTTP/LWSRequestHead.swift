import CLWS
import CWebsockets

/// A request head read from libwebsockets' parsed header table (`lws_hdr_copy`), with what the limits need.
struct LWSRequestHead {
    var request: HTTPRequest
    /// The `Content-Length` text, nil when absent.
    var contentLength: String?
    /// Whether a `Transfer-Encoding` header came (chunked bodies are not supported).
    var hasTransferEncoding: Bool
    /// The head's size as sent, approximately: request line plus `name: value\r\n` for every known header.
    var headerBytes: Int

    /// The request headers lws parses by name, with their lower-case names.
    private static let headerTokens: [(token: Int32, name: String)] = (0..<clws_token_count()).compactMap { token in
        guard clws_token_is_header(token) != 0 else { return nil }
        var name = [CChar](repeating: 0, count: 64)
        let length = clws_token_name(token, &name, Int32(name.count))
        guard length > 0 else { return nil }
        return (token, String(decoding: name[0..<Int(length)].map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }

    /// Reads the head of the request on `wsi`; nil when lws holds no request line (nothing to answer).
    init?(wsi: OpaquePointer) {
        var methodName: UnsafePointer<CChar>?
        let pathToken = clws_request_path_token(wsi, &methodName)
        guard pathToken >= 0, let rawPath = Self.copy(wsi, pathToken) else { return nil }
        // lws has decoded the path (HTTP/1 request line and HTTP/2 `:path` alike) and split the query into
        // decoded `name=value` fragments.
        let method = methodName.map { String(cString: $0) } ?? Self.copy(wsi, clws_token_method()) ?? "GET"
        var path = rawPath
        var query: [String: String] = [:]
        var headerBytes = rawPath.utf8.count + 16
        let queryToken = clws_token_query()
        let total = Int(clws_header_length(wsi, queryToken))
        if total > 0 {
            var buffer = [CChar](repeating: 0, count: total + 1)
            var index: Int32 = 0
            while index < 1000 {
                let length = clws_header_fragment(wsi, queryToken, index, &buffer, Int32(buffer.count))
                if length < 0 { break }
                let argument = String(decoding: buffer[0..<Int(length)].map { UInt8(bitPattern: $0) }, as: UTF8.self)
                headerBytes += argument.utf8.count + 1
                if !argument.isEmpty {
                    let parts = argument.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                    query[String(parts[0])] = parts.count > 1 ? String(parts[1]) : ""
                }
                index += 1
            }
        }
        if path.isEmpty { path = "/" }

        var headers: [String: String] = [:]
        for (token, name) in Self.headerTokens {
            guard let value = Self.copy(wsi, token) else { continue }
            headers[name] = value
            headerBytes += name.utf8.count + value.utf8.count + 4
        }
        // HTTP/2 carries Host as :authority: the host checks read it as `host` either way.
        if headers["host"] == nil, let authority = Self.copy(wsi, clws_token_authority()) { headers["host"] = authority }
        var address = [CChar](repeating: 0, count: 64)
        clws_peer_address(wsi, &address, address.count)
        var remote = String(decoding: address.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        // lws listens on IPv6 sockets that also take IPv4: report "127.0.0.1", not "::ffff:127.0.0.1".
        if remote.hasPrefix("::ffff:") && remote.contains(".") { remote.removeFirst("::ffff:".count) }

        request = HTTPRequest(method: method, path: path, query: query, headers: headers, remoteAddress: remote)
        contentLength = headers["content-length"]
        hasTransferEncoding = headers["transfer-encoding"] != nil
        self.headerBytes = headerBytes
    }

    /// One header's value (fragments joined by lws), nil when absent or empty.
    static func copy(_ wsi: OpaquePointer, _ token: Int32) -> String? {
        let length = Int(clws_header_length(wsi, token))
        guard length > 0 else { return nil }
        var buffer = [CChar](repeating: 0, count: length + 1)
        let copied = clws_header_copy(wsi, token, &buffer, Int32(buffer.count))
        guard copied >= 0 else { return nil }
        return String(decoding: buffer[0..<Int(copied)].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
