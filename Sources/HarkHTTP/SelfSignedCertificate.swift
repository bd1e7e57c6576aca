import COpenSSL
import Foundation

/// The certificate `hark serve` uses for HTTPS on the LAN when the user brings none: an EC P-256 key and a
/// self-signed X.509 certificate valid for ten years, naming the hostnames and IP addresses it is reached by.
///
/// Browsers warn about it once (it is self-signed) and then remember the exception, so it is kept: later runs
/// reuse it, and make a new one only when a file is missing or unreadable, the key does not match, it expires
/// within 30 days, or a requested name is not in it (the LAN address changed).
public enum SelfSignedCertificate {
    /// File names inside the directory.
    public static let certificateFileName = "hark-certificate.pem"
    public static let keyFileName = "hark-key.pem"

    private static let validitySeconds = 10 * 365 * 24 * 3600
    private static let renewalMarginSeconds = 30 * 24 * 3600

    /// Returns the certificate and key paths in `directory`, generating them first when needed (see the type's
    /// documentation). The directory is created (0700) if missing; the key is written 0600, atomically.
    /// `hostnames` are DNS names or IPv4/IPv6 addresses; `localhost`, `127.0.0.1` and `::1` are always added.
    public static func ensure(directory: URL, hostnames: [String]) throws(ServerError) -> (certificate: URL, key: URL) {
        var names: [String] = []
        for name in hostnames + ["localhost", "127.0.0.1", "::1"] where !names.contains(name) {
            guard isIPAddress(name) || isDNSName(name) else {
                throw ServerError(function: "SelfSignedCertificate.ensure", code: 0,
                                  message: "\"\(name)\" is neither a host name nor an IP address")
            }
            names.append(name)
        }
        let certificateURL = directory.appendingPathComponent(certificateFileName)
        let keyURL = directory.appendingPathComponent(keyFileName)
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        } catch {
            throw ServerError(function: "mkdir", code: 0,
                              message: "cannot create the certificate directory \(directory.path): \(error.localizedDescription)")
        }
        if isUsable(certificate: certificateURL, key: keyURL, names: names) {
            // Keep the key private even if its mode was loosened since it was written.
            chmod(keyURL.path, 0o600)
            return (certificateURL, keyURL)
        }
        let (certificatePEM, keyPEM) = try generate(names: names)
        try writeAtomically(keyPEM, to: keyURL, mode: 0o600)
        try writeAtomically(certificatePEM, to: certificateURL, mode: 0o644)
        return (certificateURL, keyURL)
    }

    // MARK: Checking an existing pair

    private static func isUsable(certificate: URL, key: URL, names: [String]) -> Bool {
        guard let certificatePEM = FileManager.default.contents(atPath: certificate.path),
              let keyPEM = FileManager.default.contents(atPath: key.path),
              let x509 = readPEM(certificatePEM, PEM_read_bio_X509) else { return false }
        defer { X509_free(x509) }
        guard let privateKey = readPEM(keyPEM, { PEM_read_bio_PrivateKey($0, $1, $2, $3) }) else { return false }
        defer { EVP_PKEY_free(privateKey) }
        guard X509_check_private_key(x509, privateKey) == 1 else { return false }
        var renewal = time(nil) + renewalMarginSeconds
        guard X509_cmp_time(X509_get0_notAfter(x509), &renewal) > 0 else { return false }
        return names.allSatisfy { name in
            isIPAddress(name) ? X509_check_ip_asc(x509, name, 0) == 1 : X509_check_host(x509, name, name.utf8.count, 0, nil) == 1
        }
    }

    private static func readPEM<T>(_ data: Data, _ read: (OpaquePointer?, UnsafeMutablePointer<OpaquePointer?>?,
                                                         (@convention(c) (UnsafeMutablePointer<CChar>?, Int32, Int32, UnsafeMutableRawPointer?) -> Int32)?,
                                                         UnsafeMutableRawPointer?) -> T?) -> T? {
        data.withUnsafeBytes { bytes -> T? in
            guard let bio = BIO_new_mem_buf(bytes.baseAddress, Int32(bytes.count)) else { return nil }
            defer { BIO_free(bio) }
            return read(bio, nil, nil, nil)
        }
    }

    // MARK: Generating a new pair

    /// The OpenSSL error queue's latest entry as a `ServerError` for `function`.
    private static func failure(_ function: String) -> ServerError {
        let code = ERR_get_error()
        var text = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(code, &text, text.count)
        let message = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return ServerError(function: function, code: Int32(truncatingIfNeeded: code),
                           message: "making the self-signed certificate failed: \(message)")
    }

    private static func generate(names: [String]) throws(ServerError) -> (certificate: [UInt8], key: [UInt8]) {
        // EC P-256: a key in milliseconds (RSA 2048 takes ~100 ms on a Pi), accepted by every browser.
        guard let context = EVP_PKEY_CTX_new_id(EVP_PKEY_EC, nil) else { throw failure("EVP_PKEY_CTX_new_id") }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_keygen_init(context) == 1 else { throw failure("EVP_PKEY_keygen_init") }
        guard EVP_PKEY_CTX_set_ec_paramgen_curve_nid(context, NID_X9_62_prime256v1) == 1 else {
            throw failure("EVP_PKEY_CTX_set_ec_paramgen_curve_nid")
        }
        var generated: OpaquePointer?
        guard EVP_PKEY_keygen(context, &generated) == 1, let key = generated else { throw failure("EVP_PKEY_keygen") }
        defer { EVP_PKEY_free(key) }

        guard let x509 = X509_new() else { throw failure("X509_new") }
        defer { X509_free(x509) }
        guard X509_set_version(x509, 2) == 1 else { throw failure("X509_set_version") }  // v3
        // A random serial: browsers reject two certificates from one issuer with the same serial.
        guard let serial = BN_new() else { throw failure("BN_new") }
        defer { BN_free(serial) }
        guard BN_rand(serial, 63, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) == 1,
              BN_to_ASN1_INTEGER(serial, X509_get_serialNumber(x509)) != nil else { throw failure("BN_rand") }
        guard X509_gmtime_adj(X509_getm_notBefore(x509), -3600) != nil,
              X509_gmtime_adj(X509_getm_notAfter(x509), validitySeconds) != nil else { throw failure("X509_gmtime_adj") }
        guard X509_set_pubkey(x509, key) == 1 else { throw failure("X509_set_pubkey") }

        guard let subject = X509_get_subject_name(x509) else { throw failure("X509_get_subject_name") }
        for (field, value) in [("O", "Hark"), ("CN", names.first(where: isDNSName) ?? "localhost")] {
            guard X509_NAME_add_entry_by_txt(subject, field, MBSTRING_ASC, value, -1, -1, 0) == 1 else {
                throw failure("X509_NAME_add_entry_by_txt")
            }
        }
        guard X509_set_issuer_name(x509, subject) == 1 else { throw failure("X509_set_issuer_name") }

        let alternativeNames = names.map { (isIPAddress($0) ? "IP:" : "DNS:") + $0 }.joined(separator: ",")
        let extensions: [(Int32, String)] = [
            (NID_basic_constraints, "critical,CA:FALSE"),
            (NID_key_usage, "critical,digitalSignature"),
            (NID_ext_key_usage, "serverAuth"),
            (NID_subject_key_identifier, "hash"),
            (NID_subject_alt_name, alternativeNames),
        ]
        var v3 = X509V3_CTX()
        X509V3_set_ctx(&v3, x509, x509, nil, nil, 0)
        for (nid, value) in extensions {
            guard let created = X509V3_EXT_conf_nid(nil, &v3, nid, value) else { throw failure("X509V3_EXT_conf_nid") }
            defer { X509_EXTENSION_free(created) }
            guard X509_add_ext(x509, created, -1) == 1 else { throw failure("X509_add_ext") }
        }
        guard X509_sign(x509, key, EVP_sha256()) > 0 else { throw failure("X509_sign") }

        let certificatePEM = try pem("PEM_write_bio_X509") { PEM_write_bio_X509($0, x509) }
        let keyPEM = try pem("PEM_write_bio_PrivateKey") { PEM_write_bio_PrivateKey($0, key, nil, nil, 0, nil, nil) }
        return (certificatePEM, keyPEM)
    }

    /// Runs a PEM writer into a memory BIO and returns the text.
    private static func pem(_ function: String, _ write: (OpaquePointer) -> Int32) throws(ServerError) -> [UInt8] {
        guard let bio = BIO_new(BIO_s_mem()) else { throw failure("BIO_new") }
        defer { BIO_free(bio) }
        guard write(bio) == 1 else { throw failure(function) }
        var bytes = [UInt8](repeating: 0, count: Int(BIO_ctrl_pending(bio)))
        let read = BIO_read(bio, &bytes, Int32(bytes.count))
        guard read == Int32(bytes.count) else { throw failure("BIO_read") }
        return bytes
    }

    /// Writes to a temporary file created with `mode` (never wider, even briefly), then renames it into place.
    private static func writeAtomically(_ bytes: [UInt8], to url: URL, mode: mode_t) throws(ServerError) {
        let temporary = url.path + ".tmp-\(getpid())"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
        guard fd >= 0 else {
            throw ServerError(function: "open", code: errno, message: "cannot write \(temporary): \(String(cString: strerror(errno)))")
        }
        fchmod(fd, mode)  // O_CREAT's mode is masked by the umask; the key must end up exactly 0600
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if written <= 0 {
                let code = errno
                close(fd)
                unlink(temporary)
                throw ServerError(function: "write", code: code, message: "cannot write \(temporary): \(String(cString: strerror(code)))")
            }
            offset += written
        }
        let synced = fsync(fd) == 0
        close(fd)
        guard synced, rename(temporary, url.path) == 0 else {
            let code = errno
            unlink(temporary)
            throw ServerError(function: "rename", code: code, message: "cannot move \(temporary) to \(url.path): \(String(cString: strerror(code)))")
        }
    }

    // MARK: Names

    static func isIPAddress(_ text: String) -> Bool {
        var buffer = [UInt8](repeating: 0, count: 16)
        return inet_pton(AF_INET, text, &buffer) == 1 || inet_pton(AF_INET6, text, &buffer) == 1
    }

    static func isDNSName(_ text: String) -> Bool {
        let labels = text.split(separator: ".", omittingEmptySubsequences: false)
        return !text.isEmpty && text.utf8.count <= 253 && labels.allSatisfy { label in
            !label.isEmpty && label.count <= 63 && !label.hasPrefix("-") && !label.hasSuffix("-")
                && label.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }
        }
    }
}
