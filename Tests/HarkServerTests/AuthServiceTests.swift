#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization
import Testing
@testable import HarkServer

/// A clock tests move by hand, so expiry and lockouts need no sleeping.
final class TestClock: Sendable {
    private let time: Mutex<Date>

    init(_ start: Date = Date(timeIntervalSince1970: 1_796_017_212)) {
        time = Mutex(start)
    }

    var now: Date { time.withLock { $0 } }

    func advance(_ seconds: TimeInterval) {
        time.withLock { $0 = $0.addingTimeInterval(seconds) }
    }

    var function: @Sendable () -> Date { { self.now } }
}

/// A fresh directory under /tmp, removed by `remove()`.
struct TemporaryDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("hark-auth-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func remove() {
        try? FileManager.default.removeItem(at: url)
    }
}

/// The permission bits of `path` (mode & 0777), from `stat`.
func permissions(_ path: String) throws -> Int {
    var info = stat()
    guard stat(path, &info) == 0 else { throw CocoaError(.fileNoSuchFile) }
    return Int(info.st_mode & 0o777)
}

/// Runs `body`, returning the `AuthError` it threw, or nil if it returned; any other error is a test failure.
/// (Closures do not infer typed throws yet, hence `any Error` and the cast.)
func authError<T>(_ body: () throws -> T, sourceLocation: SourceLocation = #_sourceLocation) -> AuthError? {
    do {
        _ = try body()
        return nil
    } catch let error as AuthError {
        return error
    } catch {
        Issue.record("expected an AuthError, got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}

@Suite struct AuthServiceTests {
    static let day: Duration = .seconds(86400)

    @Test func secretIsCreatedPrivateAndShared() throws {
        let tmp = try TemporaryDirectory()
        defer { tmp.remove() }
        let directory = tmp.url.appendingPathComponent("data/auth", isDirectory: true)
        let a = try AuthService(directory: directory, tokenLifetime: Self.day)
        #expect(try permissions(a.secretFile.path) == 0o600)
        #expect(try permissions(directory.path) == 0o700)
        let secret = try Data(contentsOf: a.secretFile)
        #expect(secret.count == AuthService.secretLength)
        #expect(Set(secret).count > 8, "the secret should be random bytes")

        // A second instance reads the same secret: tokens from one verify in the other.
        let b = try AuthService(directory: directory, tokenLifetime: Self.day)
        #expect(try Data(contentsOf: b.secretFile) == secret)
        let code = try a.issuePairingCode(lifetime: .seconds(60))
        let issued = try a.pair(code: code, client: "10.0.0.1")
        #expect(try b.verify(token: issued.token) == issued.claims)

        // A different directory has a different secret: its tokens are refused here.
        let other = try AuthService(directory: tmp.url.appendingPathComponent("other"), tokenLifetime: Self.day)
        #expect(authError { try other.verify(token: issued.token) }?.tokenProblem == .badSignature)
    }

    @Test(arguments: [0o644, 0o640, 0o604, 0o660, 0o700 | 0o044])
    func looseSecretIsRefused(mode: Int) throws {
        let tmp = try TemporaryDirectory()
        defer { tmp.remove() }
        let file = tmp.url.appendingPathComponent("auth-secret")
        try Data(repeating: 7, count: 32).write(to: file)
        #expect(chmod(file.path, mode_t(mode)) == 0)
        do {
            _ = try AuthService(directory: tmp.url, tokenLifetime: Self.day)
            Issue.record("a secret with mode \(String(mode, radix: 8)) was accepted")
        } catch {
            #expect(error.subject == file.path)
            #expect(error.description.contains(file.path))
            #expect(error.description.contains("chmod 600"))
            #expect(error.description.contains(String(mode & 0o777, radix: 8)))
        }
        // After chmod 600 the same secret is used.
        #expect(chmod(file.path, 0o600) == 0)
        _ = try AuthService(directory: tmp.url, tokenLifetime: Self.day)
        #expect(try Data(contentsOf: file) == Data(repeating: 7, count: 32))
    }

    @Test(arguments: [0, 16, 33])
    func secretOfTheWrongSizeIsRefused(size: Int) throws {
        let tmp = try TemporaryDirectory()
        defer { tmp.remove() }
        let file = tmp.url.appendingPathComponent("auth-secret")
        #expect(FileManager.default.createFile(atPath: file.path, contents: Data(repeating: 1, count: size), attributes: [.posixPermissions: 0o600]))
        #expect(throws: AuthStoreError.self) { try AuthService(directory: tmp.url, tokenLifetime: Self.day) }
    }

    @Test func corruptFilesAreNamed() throws {
        for name in ["users.json", "pairing.json"] {
            let tmp = try TemporaryDirectory()
            defer { tmp.remove() }
            try Data("{not json".utf8).write(to: tmp.url.appendingPathComponent(name))
            do {
                _ = try AuthService(directory: tmp.url, tokenLifetime: Self.day)
                Issue.record("a corrupt \(name) was accepted")
            } catch {
                #expect(error.subject == tmp.url.appendingPathComponent(name).path)
            }
        }
    }

    @Test func pairingCodeWorksOnce() throws {
        let tmp = try TemporaryDirectory()
        defer { tmp.remove() }
        let clock = TestClock()
        let auth = try AuthService(directory: tmp.url, tokenLifetime: Self.day, now: clock.function)
        let code = try auth.issuePairingCode(lifetime: .seconds(300))
        #expect(code.count == 6 && code.allSatisfy { $0.isASCII && $0.isNumber })
        // Stored hashed, never in clear, and private.
        let stored = try String(contentsOf: auth.pairingFile, encoding: .utf8)
        #expect(!stored.contains(code))
        #expect(try permissions(auth.pairingFile.path) == 0o600)

        let issued = try auth.pair(code: code, client: "10.0.0.1")
        #expect(issued.claims.subject.hasPrefix("device:"))
        #expect(issued.claims.issuer == "hark")
        #expect(issued.expires == clock.now.addingTimeInterval(86400))
        #expect(try auth.verify(token: issued.token) == issued.claims)

        let again = authError { try auth.pair(code: code, client: "10.0.0.1") }
        #expect(again?.status == 401)
        #expect(again?.code == "unauthorized")
    }

    @Test func codesAreDistinctAndEachWorks() throws {
        let tmp = try TemporaryDirectory()
        defer { tmp.remove() }
        let auth = try AuthService(directory: tmp.url, tokenLifetime: Self.day)
        let codes = try (0..<PairingStore.maximumOutstanding).map { _ in try auth.issuePairingCode(lifetime: .seconds(300)) }
        #expect(Set(codes).count == codes.count)
        // Used in another order than issued; each from its own address so the wrong guesses below do not add up.
        for (i, code) in codes.reversed().enumerated() {
            #expect(authError { try auth.pair(code: code, client: "10.0.1.\(i)") } == nil)
        }
        let left = try JSONDecoder().decode(PairingStore.Contents.self, from: Data(contentsOf: auth.pairingFile))
        #expect(left.codes.isEmpty)
    }

    @Test func pairingCodeExpires() throws {
        let tmp = try TemporaryDirectory()
        defer { tmp.remove() }
        let clock = TestClock()
        let auth = try AuthService(directory: tmp.url, tokenLifetime: Self.day, now: clock.function)
        let early = try auth.issuePairingCode(lifetime: .seconds(60))
        let late = try auth.issuePairingCode(lifetime: .seconds(60))
        clock.advance(59)
        #expect(authError { try auth.pair(code: early, client: "a") } == nil)
        clock.advance(1)
        let expired = authError { try auth.pair(code: late, client: "a") }
        #expect(expired?.status == 401)
        #expect(expired?.message == "the pairing code is wrong, used or expired")
    }

    @Test func codeFromAnotherInstanceIsAccepted() throws {
        let tmp = try TemporaryDirectory()
        defer { tmp.remove() }
        let server = try AuthService(directory: tmp.url, tokenLifetime: Self.day)
        // As `hark pair` does: its own instance, created after the server's, on the same directory.
        let cli = try AuthService(directory: tmp.url, tokenLifetime: Self.day)
        let code = try cli.issuePairingCode(lifetime: .seconds(300))
        let issued = try server.pair(code: code, client: "192.168.1.20")
        #expect(try cli.verify(token: issued.token).subject == issued.claims.subject)
        // Consumed for every instance.
        #expect(authError { try cli.pair(code: code, client: "192.168.1.20") }?.status == 401)
    }

    @Test func pairingLifetimeIsChecked() throws {
        let tmp = try TemporaryDirectory()
        defer { tmp.remove() }
        let auth = try AuthService(directory: tmp.url, tokenLifetime: Self.day)
        #expect(throws: AuthStoreError.self) { try auth.issuePairingCode(lifetime: .zero) }
        #expect(throws: AuthStoreError.self) { try auth.issuePairingCode(lifetime: .seconds(-5)) }
        #expect(throws: AuthStoreError.self) { try auth.issuePairingCode(lifetime: .seconds(25 * 3600)) }
        #expect(throws: AuthStoreError.self) { try AuthService(directory: tmp.url, tokenLifetime: .zero) }
    }

    @Test(arguments: ["12345", "1234567", "abcdef", "12 456", "", "١٢٣٤٥٦"])
    func malformedCodesAreRefused(code: String) throws {
        let tmp = try TemporaryDirectory()
        defer { tmp.remove() }
        let auth = try AuthService(directory: tmp.url, tokenLifetime: Self.day)
        _ = try auth.issuePairingCode(lifetime: .seconds(300))
        let error = authError { try auth.pair(code: code, client: "a") }
        #expect(error?.status == 401)
        #expect(error?.message == "a pairing code is 6 digits")
    }

    @Test func loginWithRightAndWrongPasswords() throws {
        let tmp = try TemporaryDirectory()
        defer { tmp.remove() }
        let auth = try AuthService(directory: tmp.url, tokenLifetime: Self.day)
        #expect(try auth.setPassword(user: "alice", password: "correct horse"))
        let stored = try String(contentsOf: auth.usersFile, encoding: .utf8)
        #expect(stored.contains("$argon2id$"))
        #expect(!stored.contains("correct horse"))
        #expect(try permissions(auth.usersFile.path) == 0o600)

        let issued = try auth.login(user: "alice", password: "correct horse", client: "a")
        #expect(issued.claims.subject == "user:alice")
        #expect(try auth.verify(token: issued.token) == issued.claims)

        let wrong = authError { try auth.login(user: "alice", password: "correct horsE", client: "a") }
        let unknown = authError { try auth.login(user: "bob", password: "correct horse", client: "a") }
        #expect(wrong?.status == 401)
        // Same answer whether the user exists or not.
        #expect(wrong == unknown)

        // A password change made by another instance (hark passwd) counts at once.
        let other = try AuthService(directory: tmp.url, tokenLifetime: Self.day)
        #expect(try other.setPassword(user: "alice", password: "battery staple") == false)
        #expect(authError { try auth.login(user: "alice", password: "correct horse", client: "b") }?.status == 401)
        #expect(authError { try auth.login(user: "alice", password: "battery staple", client: "b") } == nil)
    }

    @Test func userNamesAndPasswordsAreChecked() throws {
        let tmp = try TemporaryDirectory()
        defer { tmp.remove() }
        let auth = try AuthService(directory: tmp.url, tokenLifetime: Self.day)
        for bad in ["", "has space", "a:b", "ünï", String(repeating: "x", count: 65)] {
            #expect(throws: AuthStoreError.self, "\(bad)") { try auth.setPassword(user: bad, password: "long enough") }
        }
        #expect(throws: AuthStoreError(subject: "password", message: "too short: at least 8 characters, got 7")) {
            try auth.setPassword(user: "alice", password: "1234567")
        }
        #expect(throws: AuthStoreError.self) { try auth.setPassword(user: "alice", password: String(repeating: "p", count: 1025)) }
        #expect(!FileManager.default.fileExists(atPath: auth.usersFile.path))
        #expect(try auth.setPassword(user: "first.last@home-1_x", password: "12345678"))
    }

    @Test func tokenProblemsAreReported() throws {
        let tmp = try TemporaryDirectory()
        defer { tmp.remove() }
        let clock = TestClock()
        let auth = try AuthService(directory: tmp.url, tokenLifetime: .seconds(3600), now: clock.function)
        let issued = try auth.pair(code: auth.issuePairingCode(lifetime: .seconds(60)), client: "a")
        #expect(issued.expires.timeIntervalSince(issued.claims.issuedAt) == 3600)

        var parts = issued.token.split(separator: ".").map(String.init)
        parts[1] = Sodium.base64URL(Array(#"{"iss":"hark","sub":"user:admin","iat":1796017212,"exp":1896017212,"jti":"x"}"#.utf8))
        let tampered = authError { try auth.verify(token: parts.joined(separator: ".")) }
        #expect(tampered?.tokenProblem == .badSignature)
        #expect(tampered?.status == 401)

        let foreign = try AuthService(directory: tmp.url, issuer: "not-hark", tokenLifetime: .seconds(3600), now: clock.function)
        #expect(authError { try foreign.verify(token: issued.token) }?.tokenProblem == .wrongIssuer("hark"))

        clock.advance(3599)
        #expect(authError { try auth.verify(token: issued.token) } == nil)
        clock.advance(1)
        let expired = authError { try auth.verify(token: issued.token) }
        #expect(expired?.tokenProblem == .expired(issued.expires))
        #expect(expired?.message == "the token has expired")
    }

    @Test func concurrentVerifiesAndPairings() throws {
        let tmp = try TemporaryDirectory()
        defer { tmp.remove() }
        let a = try AuthService(directory: tmp.url, tokenLifetime: Self.day)
        let b = try AuthService(directory: tmp.url, tokenLifetime: Self.day)
        let tokens = try (0..<8).map { i in try a.pair(code: a.issuePairingCode(lifetime: .seconds(300)), client: "seed\(i)").token }
        let failures = Mutex(0)
        let paired = Mutex(0)
        DispatchQueue.concurrentPerform(iterations: 400) { i in
            let ok = authError { try (i % 2 == 0 ? a : b).verify(token: tokens[i % tokens.count]) } == nil
            // A tampered token in the mix must fail even under load.
            let forged = authError { try b.verify(token: tokens[i % tokens.count] + "x") } != nil
            if !ok || !forged { failures.withLock { $0 += 1 } }
            // Every tenth iteration: a code issued by one instance, consumed by the other, under the file lock.
            if i % 10 == 0 {
                do {
                    let code = try (i % 20 == 0 ? a : b).issuePairingCode(lifetime: .seconds(300))
                    _ = try (i % 20 == 0 ? b : a).pair(code: code, client: "client\(i)")
                    paired.withLock { $0 += 1 }
                } catch {
                    failures.withLock { $0 += 1 }
                }
            }
        }
        #expect(failures.withLock { $0 } == 0)
        #expect(paired.withLock { $0 } == 40)
        let left = try JSONDecoder().decode(PairingStore.Contents.self, from: Data(contentsOf: a.pairingFile))
        #expect(left.codes.isEmpty)
    }
}
