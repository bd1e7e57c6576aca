import Foundation
import HarkCore
import Synchronization

/// Limits failed pairing and login attempts per client address, so a 6-digit code or a password cannot be
/// guessed by trying.
///
/// A client gets `maxFailures` failures per `window` for free. The failure that reaches the limit locks it
/// out for `firstLockout`; after that it is on probation: one attempt at a time, and each further failure
/// locks it out again for twice as long as the last time (up to `maxLockout`). A success forgets everything
/// about the client, and so does `forgetAfter` without a failure (counted from the end of the last lockout). Attempts still running count against the
/// limit, so a burst of parallel guesses cannot slip past it.
///
/// Times come from the injected clock (wall-clock `Date`, like the pairing codes' expiry), so tests can
/// step through lockouts without sleeping.
public final class RateLimiter: Sendable {
    /// The limits.
    public struct Policy: Sendable, Equatable {
        public var maxFailures: Int
        public var window: Duration
        public var firstLockout: Duration
        public var maxLockout: Duration
        public var forgetAfter: Duration

        public init(maxFailures: Int, window: Duration, firstLockout: Duration, maxLockout: Duration, forgetAfter: Duration) {
            self.maxFailures = max(1, maxFailures)
            self.window = window
            self.firstLockout = firstLockout
            self.maxLockout = max(firstLockout, maxLockout)
            self.forgetAfter = forgetAfter
        }

        /// 5 failures a minute, then lockouts of 1, 2, 4, … minutes up to an hour; forgotten after an hour's quiet.
        public static let standard = Policy(maxFailures: 5, window: .seconds(60), firstLockout: .seconds(60),
                                            maxLockout: .seconds(3600), forgetAfter: .seconds(3600))
    }

    private struct Client {
        var failures: [Date] = []
        var inFlight = 0
        var lockouts = 0
        var lockedUntil: Date?
        /// The last failure, or the end of the lockout it caused: the quiet spell is counted from here.
        var quietSince: Date?
    }

    /// Beyond this many remembered clients, idle ones are pruned on the next attempt (bounds memory under a
    /// spray of source addresses).
    private static let pruneThreshold = 10_000

    public let policy: Policy
    private let now: @Sendable () -> Date
    private let clients = Mutex<[String: Client]>([:])

    public init(policy: Policy = .standard, now: @escaping @Sendable () -> Date = { Date() }) {
        self.policy = policy
        self.now = now
    }

    /// Runs `body` as one attempt by `client`, or refuses with 429 if the client is locked out. A thrown
    /// `.unauthorized` counts as a failure, a return as a success (which resets the client); other errors
    /// count as neither.
    public func attempt<T>(client: String, _ body: () throws(AuthError) -> T) throws(AuthError) -> T {
        try admit(client)
        do {
            let result = try body()
            finish(client, failed: false)
            return result
        } catch {
            finish(client, failed: error.kind == .unauthorized)
            throw error
        }
    }

    /// Seconds until `client` may try again, or nil if it may try now. For status pages and tests.
    public func retryAfter(client: String) -> Int? {
        let t = now()
        return clients.withLock { table -> Int? in
            guard var entry = table[client] else { return nil }
            refresh(&entry, at: t)
            return entry.lockedUntil.map { Self.wholeSecondsUntil($0, from: t) }
        }
    }

    private func admit(_ client: String) throws(AuthError) {
        let t = now()
        let refusal: Int? = clients.withLock { table in
            if table.count > Self.pruneThreshold { prune(&table, at: t) }
            var entry = table[client] ?? Client()
            refresh(&entry, at: t)
            defer { table[client] = entry }
            if let until = entry.lockedUntil { return Self.wholeSecondsUntil(until, from: t) }
            let allowed = entry.lockouts > 0 ? 1 : policy.maxFailures
            // An attempt still running may become the failure that locks the client out: wait for it.
            if entry.failures.count + entry.inFlight >= allowed { return 1 }
            entry.inFlight += 1
            return nil
        }
        if let seconds = refusal {
            throw AuthError(.tooManyRequests(retryAfter: seconds),
                            message: "too many failed attempts from this address; try again in \(seconds) s")
        }
    }

    private func finish(_ client: String, failed: Bool) {
        let t = now()
        clients.withLock { table in
            guard var entry = table[client] else { return }
            entry.inFlight = max(0, entry.inFlight - 1)
            if !failed {
                // Success resets; an error that was neither (a server fault) leaves the record as it was.
                if entry.inFlight == 0 { table[client] = nil } else { entry = Client(inFlight: entry.inFlight); table[client] = entry }
                return
            }
            refresh(&entry, at: t)
            entry.failures.append(t)
            entry.quietSince = t
            if entry.lockouts > 0 || entry.failures.count >= policy.maxFailures {
                let exponent = min(entry.lockouts, 30)
                let lockout = min(policy.firstLockout.timeInterval * Double(1 << exponent), policy.maxLockout.timeInterval)
                entry.lockedUntil = t.addingTimeInterval(lockout)
                entry.quietSince = entry.lockedUntil
                entry.lockouts += 1
                entry.failures = []
            }
            table[client] = entry
        }
    }

    /// Drops what has aged out: failures outside the window, an ended lockout, probation after a quiet spell.
    private func refresh(_ entry: inout Client, at t: Date) {
        let windowStart = t.addingTimeInterval(-policy.window.timeInterval)
        entry.failures.removeAll { $0 <= windowStart }
        if let until = entry.lockedUntil, until <= t { entry.lockedUntil = nil }
        if entry.lockedUntil == nil, let quiet = entry.quietSince, t.timeIntervalSince(quiet) >= policy.forgetAfter.timeInterval {
            entry.lockouts = 0
            entry.quietSince = nil
        }
    }

    private func prune(_ table: inout [String: Client], at t: Date) {
        for (key, var entry) in table {
            refresh(&entry, at: t)
            if entry.inFlight == 0, entry.lockedUntil == nil, entry.lockouts == 0, entry.failures.isEmpty {
                table[key] = nil
            } else {
                table[key] = entry
            }
        }
    }

    private static func wholeSecondsUntil(_ date: Date, from t: Date) -> Int {
        max(1, Int(date.timeIntervalSince(t).rounded(.up)))
    }
}
