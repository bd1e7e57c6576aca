import Foundation
import HarkHTTP
import Synchronization
import Testing
@testable import HarkServer

/// Guessing from many addresses, code lifetimes, revocation, and what the event log is told.
@Suite struct AuthHardeningTests {
    static let day: Duration = .seconds(86400)

    /// Collects what the service reports.
    final class Audits: Sendable {
        let list = Mutex<[AuthAudit]>([])
        var function: @Sendable (AuthAudit) -> Void { { audit in self.list.withLock { $0.append(audit) } } }
        var outcomes: [AuthAudit.Outcome] { list.withLock { $0.map(\.outcome) } }
    }

    @Test func wrongCodesFromManyAddressesVoidEveryOutstandingCode() throws {
        let tmp = try TemporaryDirectory()
        defer { tmp.remove() }
        let audits = Audits()
        let auth = try AuthService(directory: tmp.url, tokenLifetime: Self.day, audit: audits.function)
        let code = try auth.issuePairingCode(lifetime: .seconds(300))
        let other = try auth.issuePairingCode(lifetime: .seconds(300))
        let wrong = (0..<1_000_000).lazy.map { String(format: "%06d", $0) }.first { $0 != code && $0 != other }!
        // Each address stays under its own limit (4 of 5): only the appliance-wide budget can stop this.
        let addresses = AuthService.defaultPairingFailureBudget / 4
        for a in 0..<addresses {
            for _ in 0..<4 { #expect(authError { try auth.pair(code: wrong, client: "10.0.\(a).1") }?.status == 401) }
        }
        // Both codes were voided: the right one no longer works, from a fresh address.
        #expect(authError { try auth.pair(code: code, client: "10.9.9.9") }?.status == 401)
        #expect(authError { try auth.pair(code: other, client: "10.9.9.8") }?.status == 401)
        #expect(audits.outcomes.contains(.codesVoided))
        let voided = audits.list.withLock { $0.first { $0.outcome == .codesVoided } }
        #expect(voided?.message.contains("2 outstanding codes were voided") == true)
        // A code made afterwards works: the budget starts again.
        let fresh = try auth.issuePairingCode(lifetime: .seconds(300))
        #expect(authError { try auth.pair(code: fresh, client: "10.9.9.7") } == nil)
    }

    @Test func fewerWrongCodesThanTheBudgetLeaveCodesAlone() throws {
        let tmp = try TemporaryDirectory()
        defer { tmp.remove() }
        let auth = try AuthService(directory: tmp.url, tokenLifetime: Self.day, pairingFailureBudget: 8)
        let code = try auth.issuePairingCode(lifetime: .seconds(300))
        let wrong = code == "000000" ? "111111" : "000000"
        for a in 0..<7 { _ = authError { try auth.pair(code: wrong, client: "10.0.\(a).1") } }
        #expect(auth.pairingFailuresCounted == 7)
        #expect(authError { try auth.pair(code: code, client: "10.9.9.9") } == nil)
    }

    @Test func ipv6AddressesAreLimitedPerSlash64() throws {
        let tmp = try TemporaryDirectory()
        defer { tmp.remove() }
        let auth = try AuthService(directory: tmp.url, tokenLifetime: Self.day)
        // Five addresses of one /64 (a host's privacy addresses) share one allowance of five failures.
        for i in 1...5 { #expect(authError { try auth.pair(code: "000000", client: "2001:db8:0:1::\(i)") }?.status == 401) }
        #expect(authError { try auth.pair(code: "000000", client: "2001:db8:0:1:abcd::99") }?.status == 429)
        #expect(auth.rateLimiter.retryAfter(client: "2001:db8:0:1::/64") == 60)
        // The next /64 is someone else.
        #expect(authError { try auth.pair(code: "000000", client: "2001:db8:0:2::1") }?.status == 401)
    }

    @Test(arguments: [
        ("2001:db8:0:1::5", "2001:db8:0:1::/64"), ("2001:DB8:0:1:ffff:ffff:ffff:ffff", "2001:db8:0:1::/64"),
        ("fe80::1%eth0", "fe80::/64%eth0"), ("::ffff:192.168.1.9", "192.168.1.9"), ("192.168.1.9", "192.168.1.9"),
        ("::1", "::/64"), ("not an address", "not an address"), ("", ""),
    ])
    func addressGroups(address: String, group: String) {
        #expect(AddressGroup.of(address) == group)
    }

    @Test func codesLiveAtMostAnHour() throws {
        let tmp = try TemporaryDirectory()
        defer { tmp.remove() }
        let auth = try AuthService(directory: tmp.url, tokenLifetime: Self.day)
        #expect(throws: AuthStoreError.self) { _ = try auth.issuePairingCode(lifetime: .seconds(2 * 3600)) }
        #expect(throws: AuthStoreError.self) { _ = try auth.issuePairingCode(lifetime: .seconds(24 * 3600)) }
        _ = try auth.issuePairingCode(lifetime: .seconds(3600))
    }

    @Test func aRevokedTokenIsRefusedByEveryInstanceUntilItWouldHaveExpired() throws {
        let tmp = try TemporaryDirectory()
        defer { tmp.remove() }
        let clock = TestClock()
        let audits = Audits()
        let auth = try AuthService(directory: tmp.url, tokenLifetime: .seconds(3600), now: clock.function, audit: audits.function)
        let kept = try auth.pair(code: try auth.issuePairingCode(lifetime: .seconds(60)), client: "10.0.0.1")
        let lost = try auth.pair(code: try auth.issuePairingCode(lifetime: .seconds(60)), client: "10.0.0.2")
        #expect(try auth.revoke(lost.claims, reason: .loggedOut))
        #expect(try !auth.revoke(lost.claims, reason: .loggedOut))
        let refused = authError { try auth.verify(token: lost.token) }
        #expect(refused?.status == 401)
        #expect(refused?.message.contains("revoked") == true)
        #expect(try auth.verify(token: kept.token).id == kept.claims.id)
        // Another process on the same directory (the file is the list).
        let other = try AuthService(directory: tmp.url, tokenLifetime: .seconds(3600), now: clock.function)
        #expect(authError { try other.verify(token: lost.token) }?.status == 401)
        // By id alone, as an owner would from the event log.
        #expect(try other.revoke(id: kept.claims.id))
        #expect(authError { try auth.verify(token: kept.token) }?.message.contains("revoked") == true)
        // Entries go once their tokens would have expired anyway.
        clock.advance(7200)
        _ = try auth.revoke(id: "some-other-token")
        let file = try JSONDecoder().decode(RevokedTokens.Contents.self, from: Data(contentsOf: auth.revokedFile))
        #expect(file.tokens.map(\.id) == ["some-other-token"])
        #expect(audits.outcomes == [.paired, .paired, .loggedOut, .revoked])
    }

    @Test func failuresLockoutsAndSuccessesAreReported() throws {
        let tmp = try TemporaryDirectory()
        defer { tmp.remove() }
        let audits = Audits()
        let auth = try AuthService(directory: tmp.url, tokenLifetime: Self.day, audit: audits.function)
        try auth.setPassword(user: "alice", password: "correct horse battery")
        for _ in 0..<5 { _ = authError { try auth.login(user: "alice", password: "wrong password", client: "10.0.0.5") } }
        _ = authError { try auth.login(user: "alice", password: "correct horse battery", client: "10.0.0.5") }
        _ = try auth.login(user: "alice", password: "correct horse battery", client: "10.0.0.6")
        _ = authError { try auth.pair(code: "123", client: "10.0.0.7") }
        let list = audits.list.withLock { $0 }
        #expect(list.map(\.outcome) == [.failed, .failed, .failed, .failed, .failed, .lockedOut, .loggedIn, .failed])
        #expect(list[0].method == "login" && list[0].client == "10.0.0.5" && list[0].subject == "user:alice")
        #expect(list[5].message.contains("locked out"))
        #expect(list[6].tokenID != nil)
        #expect(list[7].method == "pair" && list[7].message.contains("6 digits"))
        // A password typed into the user name box is not written to the log.
        _ = authError { try auth.login(user: "my secret pass phrase!", password: "x", client: "10.0.0.8") }
        #expect(audits.list.withLock { $0.last?.subject } == nil)
    }
}
