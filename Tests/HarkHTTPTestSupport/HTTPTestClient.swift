import Foundation
import Synchronization
import HarkCore
#if canImport(Glibc)
import Glibc
#endif

/// A test client failure, with what was being done.
package struct TestClientError: Error, CustomStringConvertible {
    package var description: String

    package init(description: String) {
        self.description = description
    }
}

/// Bytes in both directions: a plain socket, or TLS over one (`TLSTestStream`).
package protocol TestByteStream: AnyObject {
    func write(_ bytes: [UInt8]) throws
    /// Some bytes; [] at end of stream; throws on timeout or error.
    func read(max: Int) throws -> [UInt8]
    func close()
}

/// A blocking loopback TCP socket with a receive timeout, for driving the server byte by byte.
package final class PlainTestStream: TestByteStream {
    package let fd: Int32
    private let closed = Mutex(false)

    /// - Parameter source: the loopback address to connect from ("127.0.0.2"…; all of 127/8 is local), so
    ///   tests can be several clients.
    package init(port: Int, timeout: TimeInterval = 5, source: String? = nil) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestClientError(description: "socket: errno \(errno)") }
        if let source {
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            local.sin_addr.s_addr = inet_addr(source)
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard bound == 0 else {
                let code = errno
                Glibc.close(fd)
                throw TestClientError(description: "bind to \(source): errno \(code)")
            }
        }
        var tv = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - Double(Int(timeout))) * 1_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            let code = errno
            Glibc.close(fd)
            throw TestClientError(description: "connect to port \(port): errno \(code)")
        }
    }

    package func write(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard sent > 0 else { throw TestClientError(description: "send: errno \(errno)") }
            offset += sent
        }
    }

    package func read(max: Int) throws -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: max)
        let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, max, 0) }
        if count < 0 {
            let code = errno
            if code == ECONNRESET { return [] }
            throw TestClientError(description: code == EAGAIN ? "receive timed out" : "recv: errno \(code)")
        }
        return Array(buffer[0..<count])
    }

    /// Closes with a TCP reset (SO_LINGER 0): a client that vanishes.
    package func abort() {
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        close()
    }

    /// Closes the socket once, however often it is called (`abort()`, then the client's deinit). Tests run in
    /// parallel, so a second close(2) of the same number would close whatever another test opened under it
    /// since: a server's listening socket or libwebsockets' own descriptors (seen as "send: errno 9", "cannot
    /// listen" and crashes inside libwebsockets, about one WebSocket suite run in five).
    package func close() {
        let open = closed.withLock { closed in
            defer { closed = true }
            return !closed
        }
        if open { Glibc.close(fd) }
    }
}

/// A parsed HTTP/1.1 response.
package struct TestResponse {
    package var status: Int
    package var headers: [String: String]
    package var body: [UInt8]

    package var text: String { String(decoding: body, as: UTF8.self) }
    package var json: JSONValue? { try? JSONValue.parse(text) }
    /// `error.code` of the API's error shape.
    package var errorCode: String? { json?["error"]?["code"]?.stringValue }
}

/// HTTP/1.1 over a `TestByteStream`: writes requests, reads responses with a Content-Length.
package final class HTTPTestClient {
    package let stream: TestByteStream
    private var buffered: [UInt8] = []

    package init(stream: TestByteStream) {
        self.stream = stream
    }

    package convenience init(port: Int, timeout: TimeInterval = 5, source: String? = nil) throws {
        self.init(stream: try PlainTestStream(port: port, timeout: timeout, source: source))
    }

    deinit { stream.close() }

    package func send(_ text: String) throws { try stream.write(Array(text.utf8)) }

    package func send(method: String, path: String, headers: [String: String] = [:], body: [UInt8]? = nil) throws {
        var head = "\(method) \(path) HTTP/1.1\r\n"
        if !headers.keys.contains(where: { $0.lowercased() == "host" }) { head += "Host: localhost\r\n" }
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if let body, headers["Content-Length"] == nil { head += "Content-Length: \(body.count)\r\n" }
        head += "\r\n"
        try stream.write(Array(head.utf8) + (body ?? []))
    }

    package func request(_ method: String, _ path: String, headers: [String: String] = [:], body: [UInt8]? = nil,
                 expectBody: Bool = true) throws -> TestResponse {
        try send(method: method, path: path, headers: headers, body: body)
        return try readResponse(expectBody: expectBody)
    }

    package func readResponse(expectBody: Bool = true) throws -> TestResponse {
        while true {
            if let end = find([13, 10, 13, 10], in: buffered) {
                let head = String(decoding: buffered[0..<end], as: UTF8.self)
                buffered.removeFirst(end + 4)
                var lines = head.components(separatedBy: "\r\n")
                let statusLine = lines.removeFirst().split(separator: " ")
                guard statusLine.count >= 2, let status = Int(statusLine[1]) else {
                    throw TestClientError(description: "bad status line in \(head)")
                }
                var headers: [String: String] = [:]
                for line in lines {
                    guard let colon = line.firstIndex(of: ":") else { continue }
                    headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                }
                let length = expectBody ? Int(headers["content-length"] ?? "0") ?? 0 : 0
                while buffered.count < length {
                    let more = try stream.read(max: 65536)
                    if more.isEmpty { throw TestClientError(description: "connection closed inside a body") }
                    buffered += more
                }
                let body = Array(buffered[0..<length])
                buffered.removeFirst(length)
                return TestResponse(status: status, headers: headers, body: body)
            }
            let more = try stream.read(max: 65536)
            if more.isEmpty {
                throw TestClientError(description: "connection closed before a response (\(buffered.count) bytes)")
            }
            buffered += more
        }
    }

    /// Reads until the server closes the connection; false if it is still open after the stream's timeout.
    package func waitForClose() -> Bool {
        while true {
            guard let more = try? stream.read(max: 65536) else { return false }
            if more.isEmpty { return true }
        }
    }

    /// Bytes read but not yet consumed (after an upgrade, the first WebSocket frames).
    package func takeBuffered() -> [UInt8] {
        defer { buffered = [] }
        return buffered
    }
}

package func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
    guard haystack.count >= needle.count else { return nil }
    for start in 0...(haystack.count - needle.count) where haystack[start..<(start + needle.count)].elementsEqual(needle) {
        return start
    }
    return nil
}
