import Foundation
import HarkAppliance
import HarkCore
import Testing

/// `hark events` over stores written here with `EventStore`.
@Suite struct EventsCLITests {
    static let t0 = Date(timeIntervalSince1970: 1_796_017_212.123)  // 2026-11-30T05:40:12.123Z

    /// Runs the built `hark` with `environment` added to this process's.
    static func hark(_ args: [String], environment: [String: String] = [:]) throws -> CLITests.Result {
        try CLITests.execute(CLITests.binary, args, in: nil, environment: ProcessInfo.processInfo.environment.merging(environment) { $1 },
                             input: FileHandle.nullDevice)
    }

    /// A data directory with one turn's events and one event outside any turn.
    static func makeStore() throws -> (directory: URL, ids: [Int64]) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hark-events-cli-\(UUID().uuidString)")
        let store = try EventStore(path: DataDirectory(url: directory).eventStoreURL)
        let turn = try store.beginTurn(source: .voice, at: t0)
        let ids = try [
            ApplianceEvent(kind: .start, text: "Hark started", time: t0.addingTimeInterval(-60)),
            ApplianceEvent(kind: .transcript, text: "turn on the light", turn: turn,
                           data: JSONObject([("transcript", "turn on the light"), ("acoustic_confidence", 0.82)]), time: t0),
            ApplianceEvent(kind: .reply, text: "Light is on", turn: turn, time: t0.addingTimeInterval(1)),
        ].map { try store.append($0) }
        return (directory, ids)
    }

    @Test func jsonLinesAreTheStoredEvents() throws {
        let (directory, ids) = try Self.makeStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        let r = try Self.hark(["events", "--data", directory.path, "--json"])
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 3)
        let objects = try lines.map { try #require(try JSONValue.parse($0).objectValue) }
        #expect(objects.map { $0["id"] } == ids.map { .number(Double($0)) })
        #expect(objects.map { $0["kind"] } == ["start", "transcript", "reply"])
        #expect(objects[1].keys == ["id", "time", "kind", "turn", "text", "transcript", "acoustic_confidence"])
        #expect(objects[1]["time"] == "2026-11-30T05:40:12.123Z")
        #expect(objects[1]["acoustic_confidence"] == .number(0.82))
        #expect(objects[0]["turn"] == .null)
        // Reading created nothing and changed nothing.
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).allSatisfy { $0.hasPrefix("events.sqlite3") })
    }

    @Test func theDefaultDataDirectoryFollowsHOME() throws {
        // A store where $HOME/.local/share/hark would be, with HARK_DATA and XDG_DATA_HOME unset: hark must
        // read it, not the real home directory's.
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("hark-home-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: home) }
        let data = home.appendingPathComponent(".local/share/hark")
        let store = try EventStore(path: DataDirectory(url: data).eventStoreURL)
        try store.append(ApplianceEvent(kind: .start, text: "started in a home of its own", time: Self.t0))
        let r = try Self.hark(["events", "--json"], environment: ["HOME": home.path, "HARK_DATA": "", "XDG_DATA_HOME": ""])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("started in a home of its own"), "\(r.stdout)\(r.stderr)")
    }

    @Test func textLinesAreLocalTimeTurnKindAndText() throws {
        let (directory, _) = try Self.makeStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        let r = try Self.hark(["events", "--data", directory.path], environment: ["TZ": "UTC"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout == """
            2026-11-30 05:39:12.123          start       Hark started
            2026-11-30 05:40:12.123  turn 1  transcript  turn on the light
            2026-11-30 05:40:13.123  turn 1  reply       Light is on

            """)
        let shifted = try Self.hark(["events", "--data", directory.path, "--limit", "1"], environment: ["TZ": "Asia/Kolkata"])
        #expect(shifted.stdout == "2026-11-30 11:10:13.123  turn 1  reply       Light is on\n")
    }

    @Test func filtersBySinceKindAndLimit() throws {
        let (directory, _) = try Self.makeStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        let since = try Self.hark(["events", "--data", directory.path, "--json", "--since", "2026-11-30T05:40:00Z"])
        #expect(since.status == 0, "\(since.stderr)")
        #expect(since.stdout.split(separator: "\n").count == 2)
        let kind = try Self.hark(["events", "--data", directory.path, "--json", "--kind", "start,reply"])
        #expect(kind.stdout.split(separator: "\n").map { $0.contains(#""kind":"start""#) || $0.contains(#""kind":"reply""#) } == [true, true])
    }

    @Test func sinceAnAgeCountsBackFromNow() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hark-events-cli-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try EventStore(path: DataDirectory(url: directory).eventStoreURL)
        try store.append(ApplianceEvent(kind: .start, text: "three hours ago", time: Date().addingTimeInterval(-3 * 3_600)))
        try store.append(ApplianceEvent(kind: .reply, text: "a minute ago", time: Date().addingTimeInterval(-60)))
        let recent = try Self.hark(["events", "--data", directory.path, "--since", "2h"])
        #expect(recent.status == 0, "\(recent.stderr)")
        #expect(recent.stdout.hasSuffix("  reply       a minute ago\n") && recent.stdout.split(separator: "\n").count == 1)
        #expect(try Self.hark(["events", "--data", directory.path, "--since", "1d"]).stdout.split(separator: "\n").count == 2)
    }

    @Test(arguments: [["--since", "yesterday"], ["--since", "2026-02-30"], ["--since", "10y"], ["--kind", "teleport"], ["--limit", "0"], ["--bogus"]])
    func badArgumentsAreUsageErrors(args: [String]) throws {
        let r = try Self.hark(["events", "--data", "/nonexistent"] + args)
        #expect(r.status == 64, "\(args): \(r.stderr)")
        if args[0] == "--since" { #expect(r.stderr.contains("\"\(args[1])\"")) }
    }

    @Test func aDirectoryWithoutAStoreExits66AndStaysEmpty() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hark-events-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let r = try Self.hark(["events", "--data", directory.path])
        #expect(r.status == 66)
        #expect(r.stderr.contains(directory.appendingPathComponent("events.sqlite3").path))
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
        // The environment chooses the directory when --data does not.
        let viaEnvironment = try Self.hark(["events"], environment: ["HARK_DATA": directory.path])
        #expect(viaEnvironment.status == 66 && viaEnvironment.stderr.contains(directory.path))
    }

    @Test func aCorruptStoreIsADataError() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hark-events-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("events.sqlite3")
        try Data(repeating: 0x2A, count: 2048).write(to: file)
        let r = try Self.hark(["events", "--data", directory.path])
        #expect(r.status == 65)
        #expect(r.stderr.contains(file.path) && r.stderr.contains("not an SQLite database"))
    }
}
