import Foundation
import HarkAppliance
import HarkCore
import HarkHTTP
import Synchronization

/// Who may use the companion server: pairing codes and passwords in, JWTs (HS256) out, and the check of
/// those tokens on every request. See docs/auth.md for the design.
///
/// Everything it keeps is in one directory (normally `<data>/auth`, `AuthService.directory(in:)`):
/// `auth-secret` (32 random bytes, mode 0600, the HMAC key of every token), `users.json` (Argon2id hashes),
/// `pairing.json` (outstanding codes, hashed) and `revoked.json` (ids of tokens logged out or revoked). Several instances, in several processes, may share the
/// directory: `hark pair` and `hark passwd` change the files under a lock and the server re-reads them on
/// each attempt.
///
/// Thread-safe: the stored properties are immutable and `Sendable`, the files are guarded by `flock`, the
/// rate limiter by its own mutex, and Argon2id runs one at a time (each takes 64 MiB).
public final class AuthService: Sendable {
    /// A token handed to a client after a successful pairing or login.
    public struct IssuedToken: Sendable, Equatable {
        /// The compact JWT for `Authorization: Bearer …`.
        public var token: String
        /// When it stops working (the `exp` claim).
        public var expires: Date
        /// What it says.
        public var claims: JWT.Claims
    }

    /// The claims of a verified token.
    public typealias Claims = JWT.Claims

    /// 30 days, as docs/server-api.md promises.
    public static let defaultTokenLifetime: Duration = .seconds(30 * 24 * 3600)
    /// How long a code from `hark pair` works by default.
    public static let defaultPairingCodeLifetime: Duration = .seconds(5 * 60)
    /// Longer-lived codes would give guessing more time than the rate limits are designed for: an hour is
    /// enough to walk to the appliance and type the code.
    public static let maximumPairingCodeLifetime: Duration = .seconds(3600)
    /// Wrong pairing codes, from all addresses together, per `pairingBudgetWindow` before every outstanding
    /// code is voided (`PairingBudget`).
    public static let defaultPairingFailureBudget = 20
    public static let pairingBudgetWindow: Duration = .seconds(3600)
    public static let minimumPasswordLength = 8
    public static let maximumPasswordBytes = 1024
    /// HMAC-SHA256 keys of the hash's own size.
    public static let secretLength = 32

    /// The auth directory inside a data directory: `<data>/auth`.
    public static func directory(in data: DataDirectory) -> URL {
        data.url.appendingPathComponent("auth", isDirectory: true)
    }

    public let directory: URL
    /// The `iss` claim written into and required of every token.
    public let issuer: String
    public let tokenLifetime: Duration
    /// Failed pairings and logins per client address (IPv6: per /64, `AddressGroup`).
    public let rateLimiter: RateLimiter
    /// Told of every issued token, failure, lockout, voiding, logout and revocation (for the event log).
    public let audit: @Sendable (AuthAudit) -> Void

    private let jwt: JWT
    private let pairing: PairingStore
    private let users: AuthUserStore
    private let revoked: RevokedTokens
    private let pairingBudget: PairingBudget
    private let now: @Sendable () -> Date
    private let hashing = Mutex<Void>(())

    /// Opens (creating if need be) the auth directory: makes the secret on first use, refuses a secret others
    /// can read, and checks that `users.json` and `pairing.json`, if present, can be read.
    /// - Parameters:
    ///   - tokenLifetime: how long issued tokens last (`AuthService.defaultTokenLifetime` is 30 days).
    ///   - rateLimit: the limits on failed attempts per client.
    ///   - pairingFailureBudget: wrong pairing codes in all, per hour, before every outstanding code is voided.
    ///   - now: the clock, for tests.
    ///   - audit: told of each auth event worth logging (`AuthAudit`).
    public init(directory: URL, issuer: String = "hark", tokenLifetime: Duration, rateLimit: RateLimiter.Policy = .standard,
                pairingFailureBudget: Int = AuthService.defaultPairingFailureBudget,
                now: @escaping @Sendable () -> Date = { Date() },
                audit: @escaping @Sendable (AuthAudit) -> Void = { _ in }) throws(AuthStoreError) {
        guard tokenLifetime > .zero else { throw AuthStoreError(subject: "token lifetime", message: "must be positive, got \(tokenLifetime)") }
        do { try Sodium.initialize() } catch { throw AuthStoreError(subject: nil, message: error.description) }
        try AuthFiles.ensureDirectory(directory)
        let secret = try AuthFiles.loadOrCreateSecret(directory.appendingPathComponent("auth-secret"), count: Self.secretLength)
        self.directory = directory
        self.issuer = issuer
        self.tokenLifetime = tokenLifetime
        self.now = now
        self.rateLimiter = RateLimiter(policy: rateLimit, now: now)
        self.jwt = JWT(key: secret)
        // A key of its own for hashing pairing codes, so no stored value is ever a MAC under the token key.
        self.pairing = PairingStore(directory: directory, key: Sodium.hmacSHA256(Array("hark pairing codes".utf8), key: secret))
        self.users = AuthUserStore(directory: directory)
        self.revoked = RevokedTokens(directory: directory)
        self.pairingBudget = PairingBudget(failures: pairingFailureBudget, window: Self.pairingBudgetWindow)
        self.audit = audit
        try pairing.validate()
        try revoked.validate()
        _ = try users.load()
    }

    /// `directory/auth-secret`.
    public var secretFile: URL { directory.appendingPathComponent("auth-secret") }
    /// `directory/users.json`.
    public var usersFile: URL { users.file }
    /// `directory/pairing.json`.
    public var pairingFile: URL { pairing.file }
    /// `directory/revoked.json`.
    public var revokedFile: URL { revoked.file }

    // MARK: Pairing

    /// A fresh one-time 6-digit code (from `randombytes_uniform`) that `pair(code:client:)` accepts — in this
    /// process or any other on the same directory — until `lifetime` has passed.
    public func issuePairingCode(lifetime: Duration) throws(AuthStoreError) -> String {
        guard lifetime > .zero, lifetime <= Self.maximumPairingCodeLifetime else {
            throw AuthStoreError(subject: "pairing code lifetime", message: "must be more than 0 s and at most 1 h, got \(lifetime)")
        }
        let t = now()
        return try pairing.issue(now: t, expires: t.addingTimeInterval(lifetime.timeInterval))
    }

    /// Exchanges a pairing code for a token (subject `device:ID`). The code is consumed: it works once.
    /// Wrong, used and expired codes are all 401 with the same message; repeated failures from `client` (its
    /// /64 for IPv6) are 429. Every `pairingFailureBudget`th wrong code in an hour, from whatever address,
    /// voids all outstanding codes.
    public func pair(code: String, client: String) throws(AuthError) -> IssuedToken {
        let group = AddressGroup.of(client)
        do {
            let issued = try rateLimiter.attempt(client: group) { () throws(AuthError) -> IssuedToken in
                let code = code.trimmingCharacters(in: .whitespaces)
                guard code.count == PairingStore.digits, code.allSatisfy({ $0.isASCII && $0.isNumber }) else {
                    throw AuthError(.unauthorized, message: "a pairing code is \(PairingStore.digits) digits")
                }
                let accepted: Bool
                do throws(AuthStoreError) { accepted = try pairing.consume(code, now: now()) } catch { throw AuthError(.internal, message: error.description) }
                guard accepted else {
                    if pairingBudget.recordFailure(at: now()) { voidPairingCodes(client: group) }
                    throw AuthError(.unauthorized, message: "the pairing code is wrong, used or expired")
                }
                let device = try randomText(6)
                return try issue(subject: "device:" + device)
            }
            audit(AuthAudit(outcome: .paired, method: "pair", client: group, subject: issued.claims.subject, tokenID: issued.claims.id,
                            message: "paired \(issued.claims.subject) from \(group)"))
            return issued
        } catch {
            report(error, method: "pair", client: group, subject: nil)
            throw error
        }
    }

    /// Wrong pairing codes counted towards the appliance-wide budget now.
    public var pairingFailuresCounted: Int { pairingBudget.count(at: now()) }

    private func voidPairingCodes(client: String) {
        let message: String
        do throws(AuthStoreError) {
            let count = try pairing.voidAll()
            message = "\(pairingBudget.failures) wrong pairing codes within \(Int(Self.pairingBudgetWindow.timeInterval / 60)) minutes: "
                + "\(count) outstanding code\(count == 1 ? " was" : "s were") voided; make a new one with hark pair"
        } catch {
            message = "\(pairingBudget.failures) wrong pairing codes: voiding the outstanding codes failed: \(error)"
        }
        audit(AuthAudit(outcome: .codesVoided, method: "pair", client: client, message: message))
    }

    /// Logs a failed or refused attempt.
    private func report(_ error: AuthError, method: String, client: String, subject: String?) {
        switch error.kind {
        case .unauthorized:
            audit(AuthAudit(outcome: .failed, method: method, client: client, subject: subject,
                            message: "failed \(method == "pair" ? "pairing" : "login")\(subject.map { " as \($0)" } ?? "") from \(client): \(error.message)"))
        case .tooManyRequests(let seconds):
            audit(AuthAudit(outcome: .lockedOut, method: method, client: client, subject: subject,
                            message: "\(method == "pair" ? "pairing" : "login") from \(client) refused: locked out for \(seconds) s after repeated failures"))
        case .internal:
            break
        }
    }

    // MARK: Users

    /// Creates `user` or changes their password; returns true if the user is new. The password is stored as
    /// an Argon2id hash (`crypto_pwhash_str`, INTERACTIVE limits). User names are 1–64 of `A–Z a–z 0–9 . _ @ -`;
    /// passwords at least 8 characters and at most 1024 bytes.
    @discardableResult
    public func setPassword(user: String, password: String) throws(AuthStoreError) -> Bool {
        try Self.checkUserName(user)
        try Self.checkPassword(password)
        let hash: String
        do throws(SodiumError) {
            hash = try hashing.withLock { _ throws(SodiumError) -> String in try Sodium.passwordHash(password) }
        } catch {
            throw AuthStoreError(subject: users.file.path, message: error.description)
        }
        return try users.setHash(hash, for: user)
    }

    /// Fails with a message naming the rule if `name` is not an allowed user name.
    public static func checkUserName(_ name: String) throws(AuthStoreError) {
        let allowed = (1...64).contains(name.unicodeScalars.count)
            && name.unicodeScalars.allSatisfy { $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "._@-".unicodeScalars.contains($0)) }
        guard allowed else {
            throw AuthStoreError(subject: "user name \"\(name)\"", message: "use 1 to 64 letters, digits or . _ @ - (ASCII)")
        }
    }

    /// Fails with a message naming the rule if `password` is too short or too long.
    public static func checkPassword(_ password: String) throws(AuthStoreError) {
        guard password.count >= minimumPasswordLength else {
            throw AuthStoreError(subject: "password", message: "too short: at least \(minimumPasswordLength) characters, got \(password.count)")
        }
        guard password.utf8.count <= maximumPasswordBytes else {
            throw AuthStoreError(subject: "password", message: "too long: at most \(maximumPasswordBytes) bytes")
        }
    }

    /// Exchanges a user name and password for a token (subject `user:NAME`). Unknown users cost the same
    /// Argon2id check as known ones and get the same message, so neither timing nor text says who exists.
    public func login(user: String, password: String, client: String) throws(AuthError) -> IssuedToken {
        let group = AddressGroup.of(client)
        do {
            let issued = try checkLogin(user: user, password: password, group: group)
            audit(AuthAudit(outcome: .loggedIn, method: "login", client: group, subject: issued.claims.subject, tokenID: issued.claims.id,
                            message: "logged in as \(user) from \(group)"))
            return issued
        } catch {
            // The name tried goes into the log only if it is a plausible user name (not a password typed in the wrong box).
            let shown = (try? Self.checkUserName(user)) != nil ? "user:" + user : nil
            report(error, method: "login", client: group, subject: shown)
            throw error
        }
    }

    private func checkLogin(user: String, password: String, group: String) throws(AuthError) -> IssuedToken {
        try rateLimiter.attempt(client: group) { () throws(AuthError) -> IssuedToken in
            let hashes: [String: String]
            do throws(AuthStoreError) { hashes = try users.load() } catch { throw AuthError(.internal, message: error.description) }
            let stored = hashes[user]
            let matches: Bool
            do throws(SodiumError) {
                matches = try hashing.withLock { _ throws(SodiumError) -> Bool in try Sodium.verifyPassword(password, hash: stored ?? Self.decoyHash) }
            } catch {
                throw AuthError(.internal, message: error.description)
            }
            guard matches, stored != nil else { throw AuthError(.unauthorized, message: "wrong user name or password") }
            return try issue(subject: "user:" + user)
        }
    }

    /// A hash to check unknown users' passwords against, made once per process on first need. If hashing
    /// fails (out of memory) it is empty, which `crypto_pwhash_str_verify` rejects at once: the login still
    /// fails, only the timing disguise is lost.
    private static let decoyHash: String = (try? Sodium.passwordHash("hark decoy password for unknown users")) ?? ""

    // MARK: Tokens

    /// The claims of `token` if it is a well-formed HS256 JWT signed with this directory's secret, issued by
    /// `issuer`, not expired and not revoked; otherwise 401 with the reason in `tokenProblem` (nil for a
    /// revoked token).
    public func verify(token: String) throws(AuthError) -> Claims {
        let claims: Claims
        do {
            claims = try jwt.verify(token, issuer: issuer, now: now())
        } catch {
            throw AuthError(.unauthorized, message: error.description, tokenProblem: error)
        }
        let isRevoked: Bool
        do throws(AuthStoreError) {
            // A token issued on the strength of another (`issue(subject:basedOn:)`) carries that one's id before
            // a dot, and goes when it goes: revoking a lost phone's token also signs out the names picked on it.
            let root = claims.id.split(separator: ".", maxSplits: 1).first.map(String.init) ?? claims.id
            var hit = try revoked.contains(claims.id)
            if !hit && root != claims.id { hit = try revoked.contains(root) }
            isRevoked = hit
        } catch { throw AuthError(.internal, message: error.description) }
        if isRevoked { throw AuthError(.unauthorized, message: "the token has been logged out or revoked") }
        return claims
    }

    /// Makes the token with these claims stop working at once, everywhere (`revoked.json`); its open
    /// WebSockets close within `CompanionAPI`'s check interval. Returns false if it was revoked already.
    @discardableResult
    public func revoke(_ claims: Claims, reason: AuthAudit.Outcome = .revoked, client: String = "") throws(AuthStoreError) -> Bool {
        let added = try revoked.revoke(id: claims.id, expires: claims.expires, now: now())
        if added {
            let what = reason == .loggedOut ? "logged out" : "revoked"
            audit(AuthAudit(outcome: reason, method: reason == .loggedOut ? "logout" : "revoke", client: AddressGroup.of(client),
                            subject: claims.subject, tokenID: claims.id, message: "token \(claims.id) of \(claims.subject) \(what)"))
        }
        return added
    }

    /// Revokes a token by its id alone (`jti`, as the event log shows it), until `tokenLifetime` from now —
    /// no token with that id can outlive that.
    @discardableResult
    public func revoke(id: String, client: String = "") throws(AuthStoreError) -> Bool {
        let t = now()
        let claims = Claims(issuer: issuer, subject: "token", issuedAt: t, expires: t.addingTimeInterval(tokenLifetime.timeInterval), id: id)
        let added = try revoked.revoke(id: id, expires: claims.expires, now: t)
        if added {
            audit(AuthAudit(outcome: .revoked, method: "revoke", client: AddressGroup.of(client), tokenID: id, message: "token \(id) revoked"))
        }
        return added
    }

    /// A token for `subject` issued on the strength of a token already verified (`POST /auth`: a person
    /// picking a name on a paired device). It expires when that one does at the latest, and its id is
    /// `<that token's id>.<random>`, so `verify` refuses it once that token is revoked: a name never outlives
    /// the pairing it was picked on. Logged as an `auth` event (`named`).
    public func issue(subject: String, basedOn claims: Claims, client: String) throws(AuthError) -> IssuedToken {
        let root = claims.id.split(separator: ".", maxSplits: 1).first.map(String.init) ?? claims.id
        let t = now()
        let derived = JWT.Claims(issuer: issuer, subject: subject, issuedAt: t,
                                 expires: min(claims.expires, t.addingTimeInterval(tokenLifetime.timeInterval)),
                                 id: root + "." + (try randomText(16)))
        let issued = IssuedToken(token: jwt.sign(derived), expires: derived.expires, claims: derived)
        audit(AuthAudit(outcome: .named, method: "auth", client: AddressGroup.of(client), subject: subject, tokenID: issued.claims.id,
                        message: "\(subject) named on \(claims.subject)'s device from \(AddressGroup.of(client))"))
        return issued
    }

    /// The clock this service checks tokens against.
    public var currentTime: Date { now() }

    private func issue(subject: String) throws(AuthError) -> IssuedToken {
        let t = now()
        let claims = JWT.Claims(issuer: issuer, subject: subject, issuedAt: t, expires: t.addingTimeInterval(tokenLifetime.timeInterval),
                                id: try randomText(16))
        return IssuedToken(token: jwt.sign(claims), expires: claims.expires, claims: claims)
    }

    /// `count` random bytes as base64url.
    private func randomText(_ count: Int) throws(AuthError) -> String {
        do {
            return Sodium.base64URL(try Sodium.randomBytes(count))
        } catch {
            throw AuthError(.internal, message: error.description)
        }
    }
}
