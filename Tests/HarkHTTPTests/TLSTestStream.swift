import CWebsockets
import Foundation
import HarkHTTPTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A TLS client stream (OpenSSL) over a loopback socket that verifies the server against `trusting` (the
/// self-signed certificate as its own CA) and the host name `localhost`.
final class TLSTestStream: TestByteStream {
    private let socket: PlainTestStream
    private let context: OpaquePointer
    private let ssl: OpaquePointer
    /// The protocol ALPN settled on ("h2", "http/1.1"), nil when none.
    let negotiatedProtocol: String?

    /// - Parameter tls12Ciphers: offer only TLS 1.2 with these suites (OpenSSL names), to see what the server accepts.
    init(port: Int, trusting certificate: URL, alpn: [String] = ["http/1.1"], timeout: TimeInterval = 5, tls12Ciphers: String? = nil) throws {
        socket = try PlainTestStream(port: port, timeout: timeout)
        guard let context = SSL_CTX_new(TLS_client_method()) else { throw TestClientError(description: "SSL_CTX_new") }
        self.context = context
        if let tls12Ciphers {
            // SSL_CTX_set_max_proto_version is a macro over SSL_CTX_ctrl.
            SSL_CTX_ctrl(context, SSL_CTRL_SET_MAX_PROTO_VERSION, Int(TLS1_2_VERSION), nil)
            guard SSL_CTX_set_cipher_list(context, tls12Ciphers) == 1 else {
                SSL_CTX_free(context)
                throw TestClientError(description: "SSL_CTX_set_cipher_list \(tls12Ciphers)")
            }
        }
        guard SSL_CTX_load_verify_locations(context, certificate.path, nil) == 1 else {
            SSL_CTX_free(context)
            throw TestClientError(description: "SSL_CTX_load_verify_locations \(certificate.path)")
        }
        SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
        guard let ssl = SSL_new(context) else {
            SSL_CTX_free(context)
            throw TestClientError(description: "SSL_new")
        }
        self.ssl = ssl
        SSL_set1_host(ssl, "localhost")
        var protocols: [UInt8] = []
        for name in alpn { protocols += [UInt8(name.utf8.count)] + Array(name.utf8) }
        SSL_set_alpn_protos(ssl, protocols, UInt32(protocols.count))
        SSL_set_fd(ssl, socket.fd)
        guard SSL_connect(ssl) == 1 else {
            let verify = SSL_get_verify_result(ssl)
            SSL_free(ssl)
            SSL_CTX_free(context)
            throw TestClientError(description: "SSL_connect failed (verify result \(verify))")
        }
        var selected: UnsafePointer<UInt8>?
        var length: UInt32 = 0
        SSL_get0_alpn_selected(ssl, &selected, &length)
        negotiatedProtocol = selected.map { String(decoding: UnsafeBufferPointer(start: $0, count: Int(length)), as: UTF8.self) }
    }

    deinit {
        SSL_free(ssl)
        SSL_CTX_free(context)
        socket.close()
    }

    func write(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { SSL_write(ssl, $0.baseAddress, Int32($0.count)) }
            guard written > 0 else { throw TestClientError(description: "SSL_write: \(SSL_get_error(ssl, written))") }
            offset += Int(written)
        }
    }

    func read(max: Int) throws -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: max)
        let count = SSL_read(ssl, &buffer, Int32(max))
        if count > 0 { return Array(buffer[0..<Int(count)]) }
        let error = SSL_get_error(ssl, count)
        if error == SSL_ERROR_SYSCALL && (errno == EAGAIN || errno == EWOULDBLOCK) {
            throw TestClientError(description: "receive timed out")
        }
        return []
    }

    func close() {
        SSL_shutdown(ssl)
    }
}
