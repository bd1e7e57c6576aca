import Foundation
import HarkCore
import Synchronization

/// JSON Web Tokens (RFC 7519) signed with HMAC-SHA256 (`HS256`, RFC 7515 §3): `header.payload.signature`,
/// each part URL-safe base64 without padding.
///
/// Only HS256 is accepted: a token whose header names any other `alg` — `none` above all — is rejected
/// before its signature is looked at, so an attacker cannot choose how the token is checked.
public struct JWT: Sendable {
    /// The registered claims Hark puts in every token.
    public struct Claims: Sendable, Equatable {
        /// Issuer (`iss`): who made the token; Hark's is `"hark"`.
        public var issuer: String
        /// Subject (`sub`): whom it was issued to, `user:NAME` after a login or `device:ID` after pairing.
        public var subject: String
        /// Issued at (`iat`), whole seconds.
        public var issuedAt: Date
        /// Expiry (`exp`), whole seconds: the token is refused from this instant on.
        public var expires: Date
        /// Token identifier (`jti`): random, unique per token.
        public var id: String

        /// Dates are truncated to whole seconds, as JWT NumericDates are written here.
        public init(issuer: String, subject: String, issuedAt: Date, expires: Date, id: String) {
            self.issuer = issuer
            self.subject = subject
            self.issuedAt = JWT.wholeSeconds(issuedAt)
            self.expires = JWT.wholeSeconds(expires)
            self.id = id
        }
    }

    /// Why a token was refused.
    public enum VerificationError: Error, Sendable, Equatable, CustomStringConvertible {
        /// Not three base64url parts of JSON objects, or a required claim missing or of the wrong type.
        case malformed(String)
        /// The header's `alg` is not `HS256` (e.g. `none`); carries what it said.
        case unsupportedAlgorithm(String)
        /// The signature does not match the header and payload under this key.
        case badSignature
        /// `exp` is at or before the time of checking.
        case expired(Date)
        /// `iss` is not the expected issuer; carries what it said.
        case wrongIssuer(String)

        public var description: String {
            switch self {
            case .malformed(let why): return "the token is malformed: \(why)"
            case .unsupportedAlgorithm(let alg): return "the token's algorithm \"\(alg)\" is not accepted (only HS256)"
            case .badSignature: return "the token's signature is wrong"
            case .expired: return "the token has expired"
            case .wrongIssuer(let iss): return "the token was issued by \"\(iss)\", not by this server"
            }
        }
    }

    private let key: [UInt8]
    /// Tokens whose shape, `alg` and signature were checked, with their claims and exact `exp`: a client
    /// sends the same token with every request, and decoding, parsing and the HMAC were 5% of a `/message`
    /// turn. Issuer and expiry are checked again at every use; only genuine tokens ever enter.
    private let checked = CheckedTokens()

    /// A signer and verifier with this HMAC key (Hark's is 32 random bytes; HMAC takes any length).
    public init(key: [UInt8]) {
        self.key = key
    }

    /// The compact serialization of `claims`, signed. The header is `{"alg":"HS256","typ":"JWT"}`.
    public func sign(_ claims: Claims) -> String {
        let header: JSONValue = ["alg": "HS256", "typ": "JWT"]
        let payload: JSONValue = [
            "iss": .string(claims.issuer), "sub": .string(claims.subject),
            "iat": .number(claims.issuedAt.timeIntervalSince1970), "exp": .number(claims.expires.timeIntervalSince1970),
            "jti": .string(claims.id),
        ]
        let signingInput = Sodium.base64URL(header.serializedBytes()) + "." + Sodium.base64URL(payload.serializedBytes())
        return signingInput + "." + Sodium.base64URL(signature(of: signingInput))
    }

    /// Checks `token` in this order — shape, `alg`, signature, claims' presence, issuer, expiry — and returns
    /// its claims. The signature is compared in constant time (`sodium_memcmp`).
    public func verify(_ token: String, issuer: String, now: Date) throws(VerificationError) -> Claims {
        if let (claims, exp) = checked.lookup(token) {
            guard claims.issuer == issuer else { throw .wrongIssuer(claims.issuer) }
            guard exp > now.timeIntervalSince1970 else { throw .expired(claims.expires) }
            return claims
        }
        let payload = try verifiedPayload(token)
        guard let object = try? JSONValue.parse(Data(payload)), object.objectValue != nil else {
            throw .malformed("the payload is not a JSON object")
        }
        func string(_ name: String) throws(VerificationError) -> String {
            guard let value = object[name] else { throw .malformed("no \"\(name)\" claim") }
            guard let s = value.stringValue else { throw .malformed("the \"\(name)\" claim is a \(value.typeName), not a string") }
            return s
        }
        func date(_ name: String) throws(VerificationError) -> Date {
            guard let value = object[name] else { throw .malformed("no \"\(name)\" claim") }
            guard let seconds = value.doubleValue, seconds.isFinite else {
                throw .malformed("the \"\(name)\" claim is a \(value.typeName), not a NumericDate")
            }
            return Date(timeIntervalSince1970: seconds)
        }
        let claims = Claims(issuer: try string("iss"), subject: try string("sub"), issuedAt: try date("iat"),
                            expires: try date("exp"), id: try string("jti"))
        guard claims.issuer == issuer else { throw .wrongIssuer(claims.issuer) }
        // Compare the exact exp, not the truncated copy in `claims`: RFC 7519 allows fractional NumericDates.
        let exp = try date("exp")
        checked.insert(token, claims, exp: exp.timeIntervalSince1970)
        guard exp > now else { throw .expired(claims.expires) }
        return claims
    }

    /// Checks the shape, the header's `alg` and the signature; returns the decoded payload bytes.
    func verifiedPayload(_ token: String) throws(VerificationError) -> [UInt8] {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw .malformed("expected 3 dot-separated parts, got \(parts.count)") }
        guard let headerBytes = Sodium.decodeBase64URL(parts[0]) else { throw .malformed("the header is not base64url") }
        guard let header = try? JSONValue.parse(Data(headerBytes)), header.objectValue != nil else {
            throw .malformed("the header is not a JSON object")
        }
        guard let alg = header["alg"]?.stringValue else { throw .malformed("the header has no \"alg\"") }
        guard alg == "HS256" else { throw .unsupportedAlgorithm(alg) }
        // RFC 7515 §4.1.11: extensions a verifier does not understand must be refused, and we understand none.
        if header["crit"] != nil { throw .malformed("the header has \"crit\" extensions") }
        guard let given = Sodium.decodeBase64URL(parts[2]) else { throw .malformed("the signature is not base64url") }
        let expected = signature(of: token[..<parts[2].startIndex].dropLast())
        guard Sodium.constantTimeEqual(given, expected) else { throw .badSignature }
        guard let payload = Sodium.decodeBase64URL(parts[1]) else { throw .malformed("the payload is not base64url") }
        return payload
    }

    /// HMAC-SHA256 of the ASCII signing input `BASE64URL(header).BASE64URL(payload)`.
    func signature(of signingInput: some StringProtocol) -> [UInt8] {
        Sodium.hmacSHA256(Array(signingInput.utf8), key: key)
    }

    static func wholeSeconds(_ date: Date) -> Date {
        Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.down))
    }
}

/// `JWT`'s memory of genuine tokens: at most `capacity`, forgotten all at once when full (a server has a few
/// dozen clients; a flood of distinct genuine tokens only costs the checks again).
private final class CheckedTokens: Sendable {
    static let capacity = 256
    private let tokens = Mutex<[String: (claims: JWT.Claims, exp: Double)]>([:])

    func lookup(_ token: String) -> (JWT.Claims, Double)? {
        tokens.withLock { $0[token].map { ($0.claims, $0.exp) } }
    }

    func insert(_ token: String, _ claims: JWT.Claims, exp: Double) {
        tokens.withLock { tokens in
            if tokens.count >= Self.capacity { tokens.removeAll(keepingCapacity: true) }
            tokens[token] = (claims, exp)
        }
    }
}
