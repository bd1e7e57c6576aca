import Foundation
import Synchronization
import Testing
@testable import HarkServer

/// Failed pairings and logins per client address: the limit, the back-off, the reset.
@Suite struct AuthRateLimitTests {
    static let day: Duration = .seconds(86400)

    @Test func pairingLimitKicksInBacksOffAndResets() throws {
        let tmp = try TemporaryDirectory()
        defer { tmp.remove() }
        let clock = TestClock()
        let auth = try AuthService(directory: tmp.url, tokenLifetime: Self.day, now: clock.function)
        let code = try auth.issuePairingCode(lifetime: .seconds(3600))
        let wrong = code == "000000" ? "111111" : "000000"
        let client = "192.168.1.50"

        for _ in 0..<5 { #expect(authError { try auth.pair(code: wrong, client: client) }?.status == 401) }
        // Locked out: even the right code is refused, and not consumed.
        let locked = authError { try auth.pair(code: code, client: client) }
        #expect(locked?.status == 429)
        #expect(locked?.code == "too_many_requests")
        #expect(locked?.retryAfter == 60)
        #expect(auth.rateLimiter.retryAfter(client: client) == 60)
        // Another address is not affected.
        #expect(authError { try auth.pair(code: wrong, client: "192.168.1.51") }?.status == 401)

        clock.advance(30)
        #expect(authError { try auth.pair(code: code, client: client) }?.retryAfter == 30)
        clock.advance(30)
        // On probation: one more failure locks it out again, for twice as long.
        #expect(authError { try auth.pair(code: wrong, client: client) }?.status == 401)
        #expect(authError { try auth.pair(code: code, client: client) }?.retryAfter == 120)
        clock.advance(120)
        #expect(authError { try auth.pair(code: wrong, client: client) }?.status == 401)
        #expect(authError { try auth.pair(code: code, client: client) }?.retryAfter == 240)
        clock.advance(240)

        // A success resets everything: five free failures again, then the first lockout again.
        #expect(authError { try auth.pair(code: code, client: client) } == nil)
        #expect(auth.rateLimiter.retryAfter(client: client) == nil)
        for _ in 0..<5 { #expect(authError { try auth.pair(code: wrong, client: client) }?.status == 401) }
        #expect(authError { try auth.pair(code: wrong, client: client) }?.retryAfter == 60)
    }

    @Test func failuresOutsideTheWindowDoNotCount() throws {
        let tmp = try TemporaryDirectory()
        defer { tmp.remove() }
        let clock = TestClock()
        let auth = try AuthService(directory: tmp.url, tokenLifetime: Self.day, now: clock.function)
        // Four failures a minute, for five minutes: never locked out.
        for _ in 0..<5 {
            for _ in 0..<4 { #expect(authError { try auth.pair(code: "000000", client: "c") }?.status == 401) }
            clock.advance(61)
        }
    }

    @Test func probationIsForgottenAfterAQuietHour() throws {
        let clock = TestClock()
        let limiter = RateLimiter(now: clock.function)
        func fail() -> AuthError? { authError { try limiter.attempt(client: "c") { () throws(AuthError) in throw AuthError(.unauthorized, message: "no") } } }
        for _ in 0..<5 { #expect(fail()?.status == 401) }
        #expect(fail()?.status == 429)
        clock.advance(60)
        #expect(fail()?.status == 401)  // probation: this one relocks
        #expect(fail()?.retryAfter == 120)
        // The quiet hour counts from the end of the lockout, not from the failure.
        clock.advance(120 + 3599)
        #expect(fail()?.status == 401)  // still on probation: relocks, longer
        #expect(fail()?.retryAfter == 240)
        clock.advance(240 + 3600)
        for _ in 0..<5 { #expect(fail()?.status == 401) }
        #expect(fail()?.retryAfter == 60)
    }

    @Test func lockoutsAreCapped() {
        let clock = TestClock()
        let limiter = RateLimiter(now: clock.function)
        func fail() -> AuthError? { authError { try limiter.attempt(client: "c") { () throws(AuthError) in throw AuthError(.unauthorized, message: "no") } } }
        for _ in 0..<5 { _ = fail() }
        var waits: [Int] = []
        for _ in 0..<10 {
            guard let wait = limiter.retryAfter(client: "c") else { break }
            waits.append(wait)
            clock.advance(TimeInterval(wait))
            _ = fail()
        }
        #expect(waits == [60, 120, 240, 480, 960, 1920, 3600, 3600, 3600, 3600])
    }

    @Test func loginFailuresCountToo() throws {
        let tmp = try TemporaryDirectory()
        defer { tmp.remove() }
        let auth = try AuthService(directory: tmp.url, tokenLifetime: Self.day)
        try auth.setPassword(user: "alice", password: "correct horse")
        for _ in 0..<5 { #expect(authError { try auth.login(user: "alice", password: "wrong guess", client: "c") }?.status == 401) }
        #expect(authError { try auth.login(user: "alice", password: "correct horse", client: "c") }?.status == 429)
        // Failed logins and failed pairings share the budget of an address.
        #expect(authError { try auth.pair(code: "123456", client: "c") }?.status == 429)
        #expect(authError { try auth.login(user: "alice", password: "correct horse", client: "d") } == nil)
    }

    @Test func parallelGuessesCannotSlipPastTheLimit() throws {
        let tmp = try TemporaryDirectory()
        defer { tmp.remove() }
        let auth = try AuthService(directory: tmp.url, tokenLifetime: Self.day)
        let statuses = Mutex<[Int]>([])
        DispatchQueue.concurrentPerform(iterations: 40) { _ in
            let status = authError { try auth.pair(code: "000000", client: "burst") }?.status ?? 200
            statuses.withLock { $0.append(status) }
        }
        let all = statuses.withLock { $0 }
        #expect(all.count == 40)
        #expect((1...5).contains(all.filter { $0 == 401 }.count), "\(all)")
        #expect(all.filter { $0 == 429 }.count == 40 - all.filter { $0 == 401 }.count)
    }

    @Test func serverFaultsAreNotCountedAsGuesses() throws {
        let tmp = try TemporaryDirectory()
        defer { tmp.remove() }
        let auth = try AuthService(directory: tmp.url, tokenLifetime: Self.day)
        try Data("garbage".utf8).write(to: auth.pairingFile)
        for _ in 0..<10 {
            let error = authError { try auth.pair(code: "123456", client: "c") }
            #expect(error?.status == 500)
            #expect(error?.message.contains(auth.pairingFile.path) == true)
        }
        #expect(auth.rateLimiter.retryAfter(client: "c") == nil)
    }
}
