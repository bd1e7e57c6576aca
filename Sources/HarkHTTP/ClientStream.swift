import COpenSSL
import Foundation
import Synchronization

/// Why a connection to another Hark server failed: what was being done and what went wrong, in words that
/// say what to fix (a refused connection, a certificate that is not the pinned one, a status and its message).
public struct ClientError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    /// The HTTP status when the server answered with an error, else nil.
    public var status: Int?

    public init(_ message: String, status: Int? = nil) {
        self.message = message
        self.status = status
    }

    public var description: String { message }
}

/// A server to connect to, from `http://host:port` or `https://host:port` (a path, query or user part is an
/// error: the paths are the API's). IPv6 literals go in brackets.
public struct ServerAddress: Sendable, Equatable, CustomStringConvertible {
    public var secure: Bool
    public var host: String
    public var port: Int

    public init(url: String) throws(ClientError) {
        let text = url.trimmingCharacters(in: .whitespaces)
        let rest: Substring
        if text.lowercased().hasPrefix("https://") {
            secure = true
            rest = text.dropFirst(8)
        } else if text.lowercased().hasPrefix("http://") {
            secure = false
            rest = text.dropFirst(7)
        } else {
            throw ClientError("\"\(url)\" is not an http:// or https:// address")
        }
        var authority = rest.hasSuffix("/") ? rest.dropLast() : rest
        guard !authority.isEmpty, !authority.contains(where: { "/?#@ ".contains($0) }) else {
            throw ClientError("\"\(url)\" must be scheme://host:port and nothing more (no path, query or user)")
        }
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw ClientError("\"\(url)\": an IPv6 address needs its closing ]") }
            host = String(authority[authority.index(after: authority.startIndex)..<close])
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw ClientError("\"\(url)\": expected :port after the IPv6 address") }
                portText = after.dropFirst()
            }
        } else if let colon = authority.lastIndex(of: ":") {
            host = String(authority[..<colon])
            portText = authority[authority.index(after: colon)...]
            authority = authority[..<colon]
        } else {
            host = String(authority)
        }
        if let portText {
            guard let value = Int(portText), (1...65_535).contains(value) else { throw ClientError("\"\(url)\": the port must be 1-65535") }
            port = value
        } else {
            port = secure ? 443 : 80
        }
        guard !host.isEmpty else { throw ClientError("\"\(url)\" names no host") }
    }

    /// `scheme://host:port`.
    public var description: String { "\(secure ? "https" : "http")://\(hostHeader)" }

    /// The `Host` header's value.
    var hostHeader: String { (host.contains(":") ? "[\(host)]" : host) + ":\(port)" }
}

/// One TCP connection to a server, with TLS when the address is `https`, on a non-blocking socket. Reads and
/// writes may come from different threads: every call into OpenSSL (which must not use one connection from
/// two threads at once) holds one lock, and waiting for the socket happens outside it.
///
/// **Trust.** A Hark server on the LAN has a self-signed certificate, so no authority vouches for it; the
/// client instead pins the SHA-256 of the certificate it was linked with (`hark link` records it) and
/// refuses any other before a single byte of the request — and so the token — is sent. Unpinned TLS is only
/// for `hark link`'s first contact, which shows the fingerprint to be compared with the server's own.
final class ClientStream: @unchecked Sendable {
    // @unchecked: `fd` and `ssl` are set once in `init`; every use of `ssl` holds `lock`, and `closed` is atomic.
    let address: ServerAddress
    private let fd: Int32
    private let ssl: OpaquePointer?
    private let context: OpaquePointer?
    private let lock = Mutex(())
    private let closed = Atomic(false)
    /// SHA-256 of the server's certificate (DER) when TLS, else nil.
    let certificateSHA256: [UInt8]?

    /// How long connecting, the TLS handshake and each blocked write may take.
    let timeout: Double

    /// Connects to `address`. With TLS, `pin` (a certificate's SHA-256) must match unless `allowUnpinned`.
    init(_ address: ServerAddress, pin: [UInt8]?, allowUnpinned: Bool = false, timeout: Double = 10) throws(ClientError) {
        self.address = address
        self.timeout = timeout
        Self.ignoreSIGPIPE
        fd = try Self.connect(address, timeout: timeout)
        guard address.secure else {
            ssl = nil
            context = nil
            certificateSHA256 = nil
            return
        }
        guard pin != nil || allowUnpinned else {
            Glibc.close(fd)
            throw ClientError("\(address) uses TLS but no certificate fingerprint was given to check it against (run hark link)")
        }
        do throws(ClientError) {
            (context, ssl, certificateSHA256) = try Self.handshake(fd: fd, host: address.host, timeout: timeout)
        } catch {
            Glibc.close(fd)
            throw error
        }
        if let pin, pin != certificateSHA256 {
            // Fully initialised, so `deinit` frees the connection and closes the socket.
            throw ClientError("\(address)'s certificate is not the one it was linked with (SHA-256 \(Fingerprint.display(certificateSHA256 ?? [])), expected \(Fingerprint.display(pin))): another host may be answering at that address; if the server made a new certificate, run hark link again")
        }
    }

    deinit {
        if let ssl { SSL_free(ssl) }
        if let context { SSL_CTX_free(context) }
        Glibc.close(fd)
    }

    /// A write on a socket whose peer has gone raises SIGPIPE, which kills the process by default; OpenSSL
    /// writes with plain `write`, so no per-call flag can avoid it. A network client ignores it and gets EPIPE.
    private static let ignoreSIGPIPE: Void = { signal(SIGPIPE, SIG_IGN) }()

    // MARK: Reading and writing

    /// Up to `maximum` bytes; waits at most `wait` seconds for some. Returns nil on timeout, [] once the server
    /// has closed the connection.
    func read(maximum: Int = 16_384, wait: Double) throws(ClientError) -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: maximum)
        let deadline = Date().addingTimeInterval(wait)
        while true {
            if closed.load(ordering: .relaxed) { return [] }
            let attempt: (count: Int, want: Int32) = lock.withLock { _ in
                buffer.withUnsafeMutableBytes { raw in
                    if let ssl {
                        ERR_clear_error()
                        let n = SSL_read(ssl, raw.baseAddress, Int32(maximum))
                        return n > 0 ? (Int(n), 0) : (Int(n), SSL_get_error(ssl, n))
                    }
                    let n = recv(fd, raw.baseAddress, maximum, Int32(MSG_DONTWAIT))
                    return n >= 0 ? (n, 0) : (-1, errno)
                }
            }
            if attempt.count > 0 { return Array(buffer[0..<attempt.count]) }
            var events = Int16(POLLIN)
            if ssl != nil {
                switch attempt.want {
                case SSL_ERROR_ZERO_RETURN: return []
                case SSL_ERROR_WANT_READ: break
                case SSL_ERROR_WANT_WRITE: events = Int16(POLLOUT)
                case SSL_ERROR_SYSCALL where attempt.count == 0: return []  // closed without close_notify
                default: throw ClientError("reading from \(address): \(Self.openSSLError(attempt.want))")
                }
            } else if attempt.count == 0 {
                return []
            } else if attempt.want != EAGAIN && attempt.want != EWOULDBLOCK && attempt.want != EINTR {
                throw ClientError("reading from \(address): \(String(cString: strerror(attempt.want)))")
            }
            let left = deadline.timeIntervalSinceNow
            if left <= 0 { return nil }
            try poll(events, seconds: min(left, 0.05))
        }
    }

    /// Writes all of `bytes`, waiting at most `timeout` for the socket to take them.
    func write(_ bytes: [UInt8]) throws(ClientError) {
        var offset = 0
        let deadline = Date().addingTimeInterval(timeout)
        while offset < bytes.count {
            if closed.load(ordering: .relaxed) { throw ClientError("the connection to \(address) is closed") }
            let attempt: (count: Int, want: Int32) = lock.withLock { _ in
                bytes.withUnsafeBytes { raw in
                    let base = raw.baseAddress! + offset
                    let left = bytes.count - offset
                    if let ssl {
                        ERR_clear_error()
                        let n = SSL_write(ssl, base, Int32(left))
                        return n > 0 ? (Int(n), 0) : (Int(n), SSL_get_error(ssl, n))
                    }
                    let n = send(fd, base, left, Int32(MSG_DONTWAIT | MSG_NOSIGNAL))
                    return n >= 0 ? (n, 0) : (-1, errno)
                }
            }
            if attempt.count > 0 {
                offset += attempt.count
                continue
            }
            var events = Int16(POLLOUT)
            if ssl != nil {
                switch attempt.want {
                case SSL_ERROR_WANT_WRITE: break
                case SSL_ERROR_WANT_READ: events = Int16(POLLIN)
                default: throw ClientError("writing to \(address): \(Self.openSSLError(attempt.want))")
                }
            } else if attempt.want != EAGAIN && attempt.want != EWOULDBLOCK && attempt.want != EINTR {
                throw ClientError("writing to \(address): \(String(cString: strerror(attempt.want)))")
            }
            let left = deadline.timeIntervalSinceNow
            if left <= 0 { throw ClientError("writing to \(address): it took nothing for \(Int(timeout)) s") }
            try poll(events, seconds: min(left, 0.05))
        }
    }

    /// Shuts the connection; a read or write blocked in another thread returns within 50 ms.
    func close() {
        guard !closed.exchange(true, ordering: .relaxed) else { return }
        lock.withLock { _ in
            if let ssl { SSL_shutdown(ssl) }
            shutdown(fd, Int32(SHUT_RDWR))
        }
    }

    private func poll(_ events: Int16, seconds: Double) throws(ClientError) {
        var entry = pollfd(fd: fd, events: events, revents: 0)
        let n = Glibc.poll(&entry, 1, Int32(max(1, seconds * 1000)))
        if n < 0 && errno != EINTR { throw ClientError("waiting for \(address): \(String(cString: strerror(errno)))") }
    }

    // MARK: Connecting

    private static func connect(_ address: ServerAddress, timeout: Double) throws(ClientError) -> Int32 {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_ADDRCONFIG
        var found: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(address.host, String(address.port), &hints, &found)
        guard status == 0, let first = found else {
            throw ClientError("cannot find \(address.host): \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(first) }
        var lastError = "no address"
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let info = entry {
            entry = info.pointee.ai_next
            let fd = socket(info.pointee.ai_family, info.pointee.ai_socktype | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), info.pointee.ai_protocol)
            if fd < 0 { lastError = String(cString: strerror(errno)); continue }
            // Small frames (20 ms of audio) go out at once rather than waiting to be coalesced.
            func connected() -> Int32 {
                var on: Int32 = 1
                setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
                return fd
            }
            if Glibc.connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 { return connected() }
            if errno == EINPROGRESS {
                var entry = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                if Glibc.poll(&entry, 1, Int32(timeout * 1000)) == 1 {
                    var error: Int32 = 0
                    var length = socklen_t(MemoryLayout<Int32>.size)
                    getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length)
                    if error == 0 {
                        return connected()
                    }
                    lastError = String(cString: strerror(error))
                } else {
                    lastError = "no answer in \(Int(timeout)) s"
                }
            } else {
                lastError = String(cString: strerror(errno))
            }
            Glibc.close(fd)
        }
        throw ClientError("cannot connect to \(address): \(lastError)")
    }

    /// TLS 1.2 or later over `fd`; returns the context, the connection and the SHA-256 of the server's certificate.
    private static func handshake(fd: Int32, host: String, timeout: Double) throws(ClientError) -> (OpaquePointer, OpaquePointer, [UInt8]) {
        guard let context = SSL_CTX_new(TLS_client_method()) else { throw ClientError("SSL_CTX_new: \(openSSLError(0))") }
        SSL_CTX_ctrl(context, SSL_CTRL_SET_MIN_PROTO_VERSION, Int(TLS1_2_VERSION), nil)
        guard let ssl = SSL_new(context) else {
            SSL_CTX_free(context)
            throw ClientError("SSL_new: \(openSSLError(0))")
        }
        SSL_set_fd(ssl, fd)
        // SNI only for names (RFC 6066 forbids literal addresses in it).
        var literal = in_addr()
        if inet_pton(AF_INET, host, &literal) != 1, !host.contains(":") {
            // OpenSSL copies the name.
            _ = host.withCString { SSL_ctrl(ssl, SSL_CTRL_SET_TLSEXT_HOSTNAME, Int(TLSEXT_NAMETYPE_host_name), UnsafeMutableRawPointer(mutating: $0)) }
        }
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            ERR_clear_error()
            let n = SSL_connect(ssl)
            if n == 1 { break }
            let want = SSL_get_error(ssl, n)
            let left = deadline.timeIntervalSinceNow
            guard want == SSL_ERROR_WANT_READ || want == SSL_ERROR_WANT_WRITE, left > 0 else {
                SSL_free(ssl)
                SSL_CTX_free(context)
                throw ClientError(left > 0 ? "TLS handshake with \(host) failed: \(openSSLError(want))" : "TLS handshake with \(host): no answer in \(Int(timeout)) s")
            }
            var entry = pollfd(fd: fd, events: Int16(want == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT), revents: 0)
            _ = Glibc.poll(&entry, 1, Int32(max(1, left * 1000)))
        }
        guard let certificate = SSL_get1_peer_certificate(ssl) else {
            SSL_free(ssl)
            SSL_CTX_free(context)
            throw ClientError("\(host) sent no certificate")
        }
        defer { X509_free(certificate) }
        guard let hash = Fingerprint.sha256(of: certificate) else {
            SSL_free(ssl)
            SSL_CTX_free(context)
            throw ClientError("\(host)'s certificate cannot be hashed")
        }
        return (context, ssl, hash)
    }

    static func openSSLError(_ code: Int32) -> String {
        let packed = ERR_get_error()
        if packed != 0 {
            var text = [UInt8](repeating: 0, count: 256)
            text.withUnsafeMutableBufferPointer { ERR_error_string_n(packed, UnsafeMutableRawPointer($0.baseAddress!).assumingMemoryBound(to: CChar.self), $0.count) }
            return String(decoding: text.prefix { $0 != 0 }, as: UTF8.self)
        }
        if code == SSL_ERROR_SYSCALL { return errno == 0 ? "the connection was closed" : String(cString: strerror(errno)) }
        return "OpenSSL error \(code)"
    }
}

/// A certificate's SHA-256 written out: lower-case hex for files, `AB:CD:…` as browsers show it.
public enum Fingerprint {
    public static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    public static func display(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02X", $0) }.joined(separator: ":") }

    /// The SHA-256 of the certificate in a PEM file (what a client pins), nil if the file holds none.
    public static func sha256(ofCertificateFile url: URL) -> [UInt8]? {
        guard let pem = try? String(contentsOf: url, encoding: .utf8) else { return nil }
        guard let certificate = pem.withCString({ text -> OpaquePointer? in
            let bio = BIO_new_mem_buf(text, -1)
            defer { BIO_free(bio) }
            return PEM_read_bio_X509(bio, nil, nil, nil)
        }) else { return nil }
        defer { X509_free(certificate) }
        return sha256(of: certificate)
    }

    /// The SHA-256 of a certificate (`X509 *`) in DER form, nil if OpenSSL cannot compute it.
    static func sha256(of certificate: OpaquePointer) -> [UInt8]? {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        guard X509_digest(certificate, EVP_sha256(), &digest, &length) == 1 else { return nil }
        return Array(digest[0..<Int(length)])
    }

    /// The bytes of a hex string (colons between pairs allowed, as in `display`), nil if malformed.
    public static func bytes(hex text: String) -> [UInt8]? {
        let digits = Array(text.lowercased().filter { $0 != ":" })
        guard digits.count % 2 == 0, !digits.isEmpty else { return nil }
        var out = [UInt8]()
        for i in stride(from: 0, to: digits.count, by: 2) {
            guard let byte = UInt8(String(digits[i...i + 1]), radix: 16) else { return nil }
            out.append(byte)
        }
        return out
    }
}
