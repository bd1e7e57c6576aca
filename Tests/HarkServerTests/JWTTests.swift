import Foundation
import HarkCore
import Testing
@testable import HarkServer

/// HS256 signing and every way verification refuses a token.
@Suite struct JWTTests {
    static let key = Array("a 32-byte key for the JWT tests.".utf8)
    static let t0 = Date(timeIntervalSince1970: 1_796_017_212)  // 2026-11-30T05:40:12Z

    static func claims(issuer: String = "hark", lifetime: TimeInterval = 3600) -> JWT.Claims {
        JWT.Claims(issuer: issuer, subject: "user:alice", issuedAt: t0, expires: t0.addingTimeInterval(lifetime), id: "abc123")
    }

    /// A token with this header and payload JSON, signed with `key` (or with `signature` verbatim).
    static func token(header: String, payload: String, key: [UInt8] = key, signature: String? = nil) -> String {
        let input = Sodium.base64URL(Array(header.utf8)) + "." + Sodium.base64URL(Array(payload.utf8))
        return input + "." + (signature ?? Sodium.base64URL(Sodium.hmacSHA256(Array(input.utf8), key: key)))
    }

    static let goodPayload = #"{"iss":"hark","sub":"user:alice","iat":1796017212,"exp":1796020812,"jti":"abc123"}"#

    func verifyError(_ token: String, key: [UInt8] = Self.key, issuer: String = "hark", now: Date = Self.t0) -> JWT.VerificationError? {
        do {
            _ = try JWT(key: key).verify(token, issuer: issuer, now: now)
            return nil
        } catch {
            return error
        }
    }

    @Test func roundTrip() throws {
        let jwt = JWT(key: Self.key)
        let claims = Self.claims()
        let token = jwt.sign(claims)
        #expect(token.split(separator: ".").count == 3)
        #expect(!token.contains("=") && !token.contains("+") && !token.contains("/"))
        #expect(try jwt.verify(token, issuer: "hark", now: Self.t0) == claims)
        // The header is exactly what other JWT libraries expect to see.
        let header = try #require(Sodium.decodeBase64URL(token.split(separator: ".")[0]))
        #expect(String(decoding: header, as: UTF8.self) == #"{"alg":"HS256","typ":"JWT"}"#)
        let payload = try #require(Sodium.decodeBase64URL(token.split(separator: ".")[1]))
        #expect(try JSONValue.parse(Data(payload)) == JSONValue.parse(Self.goodPayload))
    }

    @Test func handMadeTokenVerifies() throws {
        let claims = try JWT(key: Self.key).verify(Self.token(header: #"{"typ":"JWT","alg":"HS256"}"#, payload: Self.goodPayload), issuer: "hark", now: Self.t0)
        #expect(claims == Self.claims())
    }

    @Test func tamperedPayloadIsABadSignature() {
        let token = JWT(key: Self.key).sign(Self.claims())
        let parts = token.split(separator: ".").map(String.init)
        let forged = Sodium.base64URL(Array(Self.goodPayload.replacingOccurrences(of: "user:alice", with: "user:admin").utf8))
        #expect(verifyError([parts[0], forged, parts[2]].joined(separator: ".")) == .badSignature)
    }

    @Test func tamperedSignatureIsABadSignature() {
        let token = JWT(key: Self.key).sign(Self.claims())
        var parts = token.split(separator: ".").map(String.init)
        // Change one character in the middle (every bit there is significant, unlike the last character's).
        var signature = Array(parts[2])
        signature[10] = signature[10] == "A" ? "B" : "A"
        parts[2] = String(signature)
        #expect(verifyError(parts.joined(separator: ".")) == .badSignature)
        // A truncated signature (24 characters: 18 whole bytes) is a bad signature, never a crash.
        parts[2] = String(token.split(separator: ".")[2].prefix(24))
        #expect(verifyError(parts.joined(separator: ".")) == .badSignature)
    }

    @Test func anotherKeyIsABadSignature() {
        let token = JWT(key: Array("another key entirely, 32 bytes..".utf8)).sign(Self.claims())
        #expect(verifyError(token) == .badSignature)
    }

    @Test func expiry() throws {
        let token = JWT(key: Self.key).sign(Self.claims(lifetime: 60))
        #expect(verifyError(token, now: Self.t0.addingTimeInterval(59.9)) == nil)
        #expect(verifyError(token, now: Self.t0.addingTimeInterval(60)) == .expired(Self.t0.addingTimeInterval(60)))
        #expect(verifyError(token, now: Self.t0.addingTimeInterval(86400)) == .expired(Self.t0.addingTimeInterval(60)))
        // RFC 7519 NumericDates may have fractions: the exact instant counts.
        let fractional = Self.token(header: #"{"alg":"HS256"}"#, payload: #"{"iss":"hark","sub":"s","iat":0,"exp":1796017212.5,"jti":"j"}"#)
        #expect(verifyError(fractional, now: Self.t0.addingTimeInterval(0.4)) == nil)
        #expect(verifyError(fractional, now: Self.t0.addingTimeInterval(0.5)) != nil)
    }

    /// One verifier remembers the tokens it has checked: a second use must still expire on time, still meet
    /// the issuer check, and a forgery of a remembered token must still fail.
    @Test func aRememberedTokenIsCheckedAgainAtEveryUse() throws {
        let jwt = JWT(key: Self.key)
        let token = jwt.sign(Self.claims(lifetime: 60))
        #expect(try jwt.verify(token, issuer: "hark", now: Self.t0) == Self.claims(lifetime: 60))
        #expect(try jwt.verify(token, issuer: "hark", now: Self.t0.addingTimeInterval(59.9)) == Self.claims(lifetime: 60))
        #expect(throws: JWT.VerificationError.expired(Self.t0.addingTimeInterval(60))) {
            try jwt.verify(token, issuer: "hark", now: Self.t0.addingTimeInterval(60))
        }
        #expect(throws: JWT.VerificationError.wrongIssuer("hark")) { try jwt.verify(token, issuer: "other", now: Self.t0) }
        var parts = token.split(separator: ".").map(String.init)
        parts[1] = Sodium.base64URL(Array(Self.goodPayload.replacingOccurrences(of: "user:alice", with: "user:admin").utf8))
        #expect(throws: JWT.VerificationError.badSignature) { try jwt.verify(parts.joined(separator: "."), issuer: "hark", now: Self.t0) }
        // An expired token is remembered as expired, not as good.
        let old = jwt.sign(Self.claims(lifetime: 1))
        for _ in 0..<2 {
            #expect(throws: JWT.VerificationError.expired(Self.t0.addingTimeInterval(1))) {
                try jwt.verify(old, issuer: "hark", now: Self.t0.addingTimeInterval(5))
            }
        }
    }

    @Test func wrongIssuer() {
        let token = JWT(key: Self.key).sign(Self.claims(issuer: "someone-else"))
        #expect(verifyError(token) == .wrongIssuer("someone-else"))
        #expect(verifyError(token, issuer: "someone-else") == nil)
    }

    @Test(arguments: ["none", "None", "HS512", "RS256", "hs256"])
    func otherAlgorithmsAreRejected(alg: String) {
        let header = #"{"alg":"\#(alg)","typ":"JWT"}"#
        // Unsigned (the classic `none` attack) and correctly HMAC-signed: both refused on the header alone.
        let unsigned = Sodium.base64URL(Array(header.utf8)) + "." + Sodium.base64URL(Array(Self.goodPayload.utf8)) + "."
        #expect(verifyError(unsigned) == .unsupportedAlgorithm(alg))
        #expect(verifyError(Self.token(header: header, payload: Self.goodPayload)) == .unsupportedAlgorithm(alg))
    }

    @Test(arguments: [
        "", "abc", "a.b", "a.b.c.d", "...", "!!!.e30.sig",
        token(header: "not json", payload: goodPayload),
        token(header: "[1]", payload: goodPayload),
        token(header: #"{"typ":"JWT"}"#, payload: goodPayload),
        token(header: #"{"alg":"HS256","crit":["exp"]}"#, payload: goodPayload),
        token(header: #"{"alg":"HS256"}"#, payload: "not json"),
        token(header: #"{"alg":"HS256"}"#, payload: #"{"iss":"hark","iat":1796017212,"exp":1796020812,"jti":"j"}"#),
        token(header: #"{"alg":"HS256"}"#, payload: #"{"iss":"hark","sub":"s","iat":1796017212,"exp":"tomorrow","jti":"j"}"#),
        token(header: #"{"alg":"HS256"}"#, payload: #"{"iss":"hark","sub":"s","iat":1796017212,"exp":1796020812}"#),
        token(header: #"{"alg":"HS256"}"#, payload: #"{"iss":7,"sub":"s","iat":1796017212,"exp":1796020812,"jti":"j"}"#),
    ])
    func malformed(token: String) {
        guard case .malformed = verifyError(token) else {
            Issue.record("\(token): expected malformed, got \(String(describing: verifyError(token)))")
            return
        }
    }

    @Test func paddedOrStandardBase64IsMalformed() {
        let token = JWT(key: Self.key).sign(Self.claims())
        #expect(verifyError(token + "=") != nil)
        let parts = token.split(separator: ".").map(String.init)
        let standard = parts[0].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/") + "==="
        guard case .malformed = verifyError([standard, parts[1], parts[2]].joined(separator: ".")) else {
            Issue.record("padded header accepted")
            return
        }
    }

    /// Known answer: RFC 7515 appendix A.1 (the HS256 example), its key and signing input verbatim.
    @Test func rfc7515AppendixA1() throws {
        let key = try #require(Sodium.decodeBase64URL("AyM1SysPpbyDfgZld3umj1qzKObwVMkoqQ-EstJQLr_T-1qS0gZH75aKtMN3Yj0iPS4hcgUuTwjAzZr1Z9CAow"))
        #expect(key.count == 64)
        let signingInput = "eyJ0eXAiOiJKV1QiLA0KICJhbGciOiJIUzI1NiJ9"
            + ".eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ"
        let expected = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
        let jwt = JWT(key: key)
        #expect(Sodium.base64URL(jwt.signature(of: signingInput)) == expected)
        let payload = try jwt.verifiedPayload(signingInput + "." + expected)
        #expect(String(decoding: payload, as: UTF8.self) == "{\"iss\":\"joe\",\r\n \"exp\":1300819380,\r\n \"http://example.com/is_root\":true}")
        // Its claims lack sub, iat and jti, which Hark requires, and it is long expired.
        guard case .malformed = verifyError(signingInput + "." + expected, key: key, issuer: "joe", now: Date(timeIntervalSince1970: 1_300_000_000)) else {
            Issue.record("the RFC token has no sub/iat/jti and must not pass as a Hark token")
            return
        }
    }

    /// RFC 4231 test case 2 (HMAC-SHA256 with a short key), through the streaming libsodium calls.
    @Test func hmacSHA256KnownAnswer() {
        let mac = Sodium.hmacSHA256(Array("what do ya want for nothing?".utf8), key: Array("Jefe".utf8))
        #expect(mac.map { String(format: "%02x", $0) }.joined() == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    }

    @Test func base64URLAgreesWithFoundation() throws {
        var generator = SystemRandomNumberGenerator()
        for length in 0..<70 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let ours = Sodium.base64URL(bytes)
            let foundation = Data(bytes).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
            #expect(ours == foundation)
            #expect(Sodium.decodeBase64URL(ours) == bytes)
        }
        #expect(Sodium.decodeBase64URL("ab+c") == nil)
        #expect(Sodium.decodeBase64URL("abc=") == nil)
        #expect(Sodium.decodeBase64URL("ab c") == nil)
    }

    @Test func constantTimeEqual() {
        #expect(Sodium.constantTimeEqual([1, 2, 3], [1, 2, 3]))
        #expect(!Sodium.constantTimeEqual([1, 2, 3], [1, 2, 4]))
        #expect(!Sodium.constantTimeEqual([1, 2, 3], [1, 2]))
        #expect(Sodium.constantTimeEqual([], []))
    }
}
