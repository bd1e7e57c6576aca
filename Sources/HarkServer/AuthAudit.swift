/// Something the auth service did that belongs in the event log: a token issued, a failed attempt, a
/// lockout, pairing codes voided, a logout or revocation. `CompanionAPI`'s owner records these as `auth`
/// events, so an owner reading `hark events` sees who tried to get in.
public struct AuthAudit: Sendable, Equatable {
    public enum Outcome: String, Sendable, CaseIterable {
        /// A pairing code was exchanged for a token.
        case paired
        /// A user name and password were exchanged for a token.
        case loggedIn = "logged_in"
        /// A wrong, used or expired code, or a wrong user name or password.
        case failed
        /// The attempt was refused because the address is locked out (429).
        case lockedOut = "locked_out"
        /// Too many wrong codes in all: every outstanding pairing code was voided.
        case codesVoided = "codes_voided"
        /// A token was given back (`POST /api/logout`).
        case loggedOut = "logged_out"
        /// A token was revoked by id (`POST /api/tokens/revoke`).
        case revoked
        /// A person picked a name on a paired device (`POST /auth`) and got a token of their own.
        case named
    }

    public var outcome: Outcome
    /// `pair` or `login` (or `logout`, `revoke`, `auth`).
    public var method: String
    /// The client's address, or its rate-limit group (an IPv6 /64); empty when not known.
    public var client: String
    /// `device:ID` or `user:NAME` when known (issued tokens, logouts), or the user name tried.
    public var subject: String?
    /// The token id (`jti`) issued, logged out or revoked.
    public var tokenID: String?
    /// One readable line, e.g. "failed pairing from 10.0.0.7: the pairing code is wrong, used or expired".
    public var message: String

    public init(outcome: Outcome, method: String, client: String, subject: String? = nil, tokenID: String? = nil, message: String) {
        self.outcome = outcome
        self.method = method
        self.client = client
        self.subject = subject
        self.tokenID = tokenID
        self.message = message
    }
}
