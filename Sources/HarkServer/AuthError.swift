/// Why a pairing, login or token was refused, shaped for the HTTP answer: a status, the API's error code and
/// a message safe to show the client (it never says whether a user exists or a code was once valid).
public struct AuthError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of refusal this is.
    public enum Kind: Sendable, Equatable {
        /// 401: wrong code, wrong user name or password, or a bad token.
        case unauthorized
        /// 429: too many failed attempts from this client; try again after this many seconds.
        case tooManyRequests(retryAfter: Int)
        /// 500: the server could not read or write its own auth files (the message names the file).
        case `internal`
    }

    public var kind: Kind
    /// A readable explanation, e.g. "the token has expired".
    public var message: String
    /// For a refused token: exactly why (malformed, bad signature, expired, wrong issuer, algorithm).
    public var tokenProblem: JWT.VerificationError?

    public init(_ kind: Kind, message: String, tokenProblem: JWT.VerificationError? = nil) {
        self.kind = kind
        self.message = message
        self.tokenProblem = tokenProblem
    }

    /// The HTTP status: 401, 429 or 500.
    public var status: Int {
        switch kind {
        case .unauthorized: return 401
        case .tooManyRequests: return 429
        case .internal: return 500
        }
    }

    /// The API's error code (docs/server-api.md): `unauthorized`, `too_many_requests` or `internal`.
    public var code: String {
        switch kind {
        case .unauthorized: return "unauthorized"
        case .tooManyRequests: return "too_many_requests"
        case .internal: return "internal"
        }
    }

    /// Seconds for the `Retry-After` header of a 429; nil otherwise.
    public var retryAfter: Int? {
        if case .tooManyRequests(let seconds) = kind { return seconds }
        return nil
    }

    public var description: String { "\(status) \(code): \(message)" }
}
