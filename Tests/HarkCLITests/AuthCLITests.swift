import Foundation
// HarkServer is reached through HarkCLI's dependencies: these tests check that what the CLI writes, the
// server's AuthService accepts.
import HarkServer
import Testing

/// `hark pair` and `hark passwd` against an `AuthService` on the same data directory.
@Suite struct AuthCLITests {
    static func temporaryDataDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("hark-auth-cli-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    @Test func pairPrintsACodeTheServerAccepts() throws {
        let data = try Self.temporaryDataDirectory()
        defer { try? FileManager.default.removeItem(at: data) }
        // The server is up before the code is made, as in real use: it must re-read pairing.json.
        let server = try AuthService(directory: data.appendingPathComponent("auth"), tokenLifetime: .seconds(3600))

        let r = try CLITests.hark(["pair", "--data", data.path, "--lifetime", "2m"])
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 2)
        let code = try #require(lines.first)
        #expect(code.count == 6 && code.allSatisfy { $0.isASCII && $0.isNumber }, "\(r.stdout)")
        #expect(lines.last?.hasPrefix("expires ") == true)
        #expect(lines.last?.contains("(in 2 min)") == true)

        let issued = try server.pair(code: code, client: "127.0.0.1")
        #expect(try server.verify(token: issued.token).subject.hasPrefix("device:"))
        // One time only.
        #expect(throws: AuthError.self) { try server.pair(code: code, client: "127.0.0.1") }
    }

    @Test func pairUsesTheDefaultDataDirectory() throws {
        let data = try Self.temporaryDataDirectory()
        defer { try? FileManager.default.removeItem(at: data) }
        let r = try EventsCLITests.hark(["pair"], environment: ["HARK_DATA": data.path])
        #expect(r.status == 0, "\(r.stderr)")
        let code = String(r.stdout.prefix(6))
        let server = try AuthService(directory: data.appendingPathComponent("auth"), tokenLifetime: .seconds(3600))
        #expect(throws: Never.self) { try server.pair(code: code, client: "127.0.0.1") }
    }

    @Test(arguments: [["pair", "--lifetime", "0s"], ["pair", "--lifetime", "25h"], ["pair", "--lifetime", "5 minutes"],
                      ["pair", "extra"], ["passwd"], ["passwd", "a", "b"], ["passwd", "not ok"], ["passwd", "alice", "--bogus"]])
    func usageErrors(args: [String]) throws {
        let data = try Self.temporaryDataDirectory()
        defer { try? FileManager.default.removeItem(at: data) }
        let r = try CLITests.hark(args + ["--data", data.path], stdin: "long enough\n")
        #expect(r.status == 64, "\(args): \(r.stderr)")
        #expect(r.stderr.contains("USAGE: hark \(args[0])"))
    }

    @Test func passwdThenLogin() throws {
        let data = try Self.temporaryDataDirectory()
        defer { try? FileManager.default.removeItem(at: data) }
        let r = try CLITests.hark(["passwd", "alice", "--data", data.path], stdin: "correct horse battery\n")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("created user alice"))

        let server = try AuthService(directory: data.appendingPathComponent("auth"), tokenLifetime: .seconds(3600))
        let issued = try server.login(user: "alice", password: "correct horse battery", client: "127.0.0.1")
        #expect(issued.claims.subject == "user:alice")
        // The newline ended the password; it is not part of it.
        #expect(throws: AuthError.self) { try server.login(user: "alice", password: "correct horse battery\n", client: "127.0.0.2") }

        let change = try CLITests.hark(["passwd", "alice", "--data", data.path], stdin: "a new passphrase\r\n")
        #expect(change.status == 0, "\(change.stderr)")
        #expect(change.stdout.contains("changed the password of alice"))
        #expect(throws: Never.self) { try server.login(user: "alice", password: "a new passphrase", client: "127.0.0.3") }
        #expect(throws: AuthError.self) { try server.login(user: "alice", password: "correct horse battery", client: "127.0.0.3") }
    }

    @Test(arguments: ["short\n", "", "\n"])
    func passwdRefusesShortOrMissingPasswords(stdin: String) throws {
        let data = try Self.temporaryDataDirectory()
        defer { try? FileManager.default.removeItem(at: data) }
        let r = try CLITests.hark(["passwd", "alice", "--data", data.path], stdin: stdin)
        #expect(r.status == 65, "\(r.stderr)")
        #expect(r.stderr.contains("password"))
        #expect(!FileManager.default.fileExists(atPath: data.appendingPathComponent("auth/users.json").path))
    }

    @Test func aLooseSecretIsNamed() throws {
        let data = try Self.temporaryDataDirectory()
        defer { try? FileManager.default.removeItem(at: data) }
        let auth = data.appendingPathComponent("auth")
        try FileManager.default.createDirectory(at: auth, withIntermediateDirectories: true)
        let secret = auth.appendingPathComponent("auth-secret")
        #expect(FileManager.default.createFile(atPath: secret.path, contents: Data(count: 32), attributes: [.posixPermissions: 0o644]))
        let r = try CLITests.hark(["pair", "--data", data.path])
        #expect(r.status == 1)
        #expect(r.stderr.contains(secret.path))
        #expect(r.stderr.contains("chmod 600"))
        #expect(r.stdout.isEmpty)
    }
}
