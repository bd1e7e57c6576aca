import CSodium

/// The few libsodium primitives auth needs, as Swift functions over byte arrays.
///
/// Every entry point calls `sodium_init` first (once per process; libsodium makes repeated calls cheap and
/// thread-safe), because `randombytes_*` and `crypto_pwhash_*` pick their implementations there.
enum Sodium {
    /// The result of `sodium_init`, computed once: Swift initialises static lets lazily and thread-safely.
    private static let initResult: Int32 = sodium_init()

    /// Initialises libsodium. The corresponding C function is `sodium_init`.
    static func initialize() throws(SodiumError) {
        // 0: initialised now, 1: already initialised; -1: the library is unusable (no entropy source).
        guard initResult >= 0 else {
            throw SodiumError(function: "sodium_init", code: initResult, message: "libsodium could not initialise (no usable random source?)")
        }
    }

    /// `count` bytes from the system's secure random source. The corresponding C function is `randombytes_buf`.
    static func randomBytes(_ count: Int) throws(SodiumError) -> [UInt8] {
        try initialize()
        var bytes = [UInt8](repeating: 0, count: count)
        if count > 0 { bytes.withUnsafeMutableBytes { randombytes_buf($0.baseAddress!, $0.count) } }
        return bytes
    }

    /// A uniformly distributed number in `0..<upperBound` (no modulo bias).
    /// The corresponding C function is `randombytes_uniform`.
    static func uniform(_ upperBound: UInt32) throws(SodiumError) -> UInt32 {
        try initialize()
        return randombytes_uniform(upperBound)
    }

    /// HMAC-SHA256 of `message` under `key` of any length. The corresponding C functions are
    /// `crypto_auth_hmacsha256_init`, `_update` and `_final`: the streaming form, because the one-shot
    /// `crypto_auth_hmacsha256` only takes 32-byte keys and known-answer vectors use other lengths.
    static func hmacSHA256(_ message: some Collection<UInt8>, key: [UInt8]) -> [UInt8] {
        var state = crypto_auth_hmacsha256_state()
        var mac = [UInt8](repeating: 0, count: Int(crypto_auth_hmacsha256_bytes()))
        // The three calls only ever return 0 (they cannot fail for in-memory input), so nothing to check.
        _ = withBytes(key) { crypto_auth_hmacsha256_init(&state, $0, $1) }
        _ = withBytes(Array(message)) { crypto_auth_hmacsha256_update(&state, $0, UInt64($1)) }
        _ = mac.withUnsafeMutableBufferPointer { crypto_auth_hmacsha256_final(&state, $0.baseAddress!) }
        sodium_memzero(&state, MemoryLayout<crypto_auth_hmacsha256_state>.size)
        return mac
    }

    /// Compares two byte strings in time that depends only on their length. The corresponding C function is
    /// `sodium_memcmp`. Lengths are not secret here (MACs have a fixed size), so unequal lengths return early.
    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        if a.isEmpty { return true }
        return withBytes(a) { pa, count in withBytes(b) { pb, _ in sodium_memcmp(pa, pb, count) == 0 } }
    }

    /// URL-safe base64 without padding (RFC 4648 §5, as JWTs use). The corresponding C function is
    /// `sodium_bin2base64` with `sodium_base64_VARIANT_URLSAFE_NO_PADDING`.
    static func base64URL(_ bytes: [UInt8]) -> String {
        let variant = Int32(sodium_base64_VARIANT_URLSAFE_NO_PADDING)
        let capacity = sodium_base64_encoded_len(bytes.count, variant)  // includes the terminating NUL
        var out = [CChar](repeating: 0, count: capacity)
        _ = withBytes(bytes) { bin, count in
            out.withUnsafeMutableBufferPointer { sodium_bin2base64($0.baseAddress!, capacity, bin, count, variant) }
        }
        return String(decoding: out.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Decodes URL-safe base64 without padding; nil unless the whole text is canonical base64url (no padding,
    /// no whitespace, no stray trailing bits). The corresponding C function is `sodium_base642bin`.
    static func decodeBase64URL(_ text: some StringProtocol) -> [UInt8]? {
        let input = Array(text.utf8)
        if input.isEmpty { return [] }
        let variant = Int32(sodium_base64_VARIANT_URLSAFE_NO_PADDING)
        var out = [UInt8](repeating: 0, count: input.count * 3 / 4 + 1)
        var length = 0
        var end: UnsafePointer<CChar>?
        let decoded = withBytes(input) { b64, count in
            b64.withMemoryRebound(to: CChar.self, capacity: count) { chars in
                let rc = out.withUnsafeMutableBufferPointer {
                    sodium_base642bin($0.baseAddress!, $0.count, chars, count, nil, &length, &end, variant)
                }
                // sodium_base642bin stops at the first character outside the alphabet and still returns 0;
                // only a decode that consumed every byte is the whole text.
                return rc == 0 && end.map { $0 - UnsafePointer(chars) } == count
            }
        }
        guard decoded else { return nil }
        return Array(out.prefix(length))
    }

    /// An Argon2id hash string (`$argon2id$v=19$m=…,t=…,p=…$salt$hash`) of `password` with a fresh salt and
    /// libsodium's INTERACTIVE limits (2 passes, 64 MiB). The corresponding C function is `crypto_pwhash_str`.
    static func passwordHash(_ password: String) throws(SodiumError) -> String {
        try initialize()
        let bytes = Array(password.utf8)
        var out = [CChar](repeating: 0, count: Int(crypto_pwhash_strbytes()))
        let rc = withBytes(bytes) { pw, count in
            pw.withMemoryRebound(to: CChar.self, capacity: count) { pwc in
                out.withUnsafeMutableBufferPointer {
                    crypto_pwhash_str($0.baseAddress!, pwc, UInt64(count),
                                      UInt64(crypto_pwhash_opslimit_interactive()), crypto_pwhash_memlimit_interactive())
                }
            }
        }
        guard rc == 0 else {
            throw SodiumError(function: "crypto_pwhash_str", code: rc, message: "could not hash the password (out of memory: Argon2id needs 64 MiB)")
        }
        return String(decoding: out.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Whether `password` matches `hash` (a `crypto_pwhash_str` string); false for a malformed hash too.
    /// The corresponding C function is `crypto_pwhash_str_verify`.
    static func verifyPassword(_ password: String, hash: String) throws(SodiumError) -> Bool {
        try initialize()
        let bytes = Array(password.utf8)
        // The C function reads a NUL-terminated string of at most crypto_pwhash_STRBYTES bytes.
        var stored = Array(hash.utf8.prefix(Int(crypto_pwhash_strbytes()) - 1)).map { CChar(bitPattern: $0) }
        stored.append(0)
        let rc = withBytes(bytes) { pw, count in
            pw.withMemoryRebound(to: CChar.self, capacity: count) { pwc in
                stored.withUnsafeBufferPointer { crypto_pwhash_str_verify($0.baseAddress!, pwc, UInt64(count)) }
            }
        }
        return rc == 0
    }

    /// Calls `body` with a non-null pointer to `bytes` and their count. libsodium declares its pointers
    /// nonnull even for empty input, and an empty Swift array need not have storage, so an empty array gets
    /// a one-byte stand-in with a count of zero.
    private static func withBytes<R>(_ bytes: [UInt8], _ body: (UnsafePointer<UInt8>, Int) -> R) -> R {
        if bytes.isEmpty {
            let standIn: [UInt8] = [0]
            return standIn.withUnsafeBufferPointer { body($0.baseAddress!, 0) }
        }
        return bytes.withUnsafeBufferPointer { body($0.baseAddress!, $0.count) }
    }
}
