import Foundation
import Testing

/// End-to-end tests of the built `hark` binary: exit codes, usage errors and output shapes.
@Suite struct CLITests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static var binary: URL {
        let candidates = [".build/debug/hark", ".build/x86_64-unknown-linux-gnu/debug/hark", ".build/aarch64-unknown-linux-gnu/debug/hark"]
        for c in candidates where FileManager.default.isExecutableFile(atPath: root.appendingPathComponent(c).path) {
            return root.appendingPathComponent(c)
        }
        return root.appendingPathComponent(candidates[0])
    }

    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    static func hark(_ args: [String], stdin: String = "") throws -> Result {
        try execute(binary, args, stdin: stdin)
    }

    /// Runs `executable` with `arguments` to its end: in `directory` (nil: this process's), with `environment`
    /// (nil: this process's), and with `input` as its standard input, or else a pipe that gets `stdin` and is
    /// closed. Every CLI test starts its processes here.
    static func execute(_ executable: URL, _ arguments: [String], in directory: URL? = root, environment: [String: String]? = nil,
                        input: FileHandle? = nil, stdin: String = "") throws -> Result {
        let p = Process()
        p.executableURL = executable
        p.arguments = arguments
        if let directory { p.currentDirectoryURL = directory }
        if let environment { p.environment = environment }
        let out = Pipe()
        let err = Pipe()
        let pipe = Pipe()
        p.standardOutput = out
        p.standardError = err
        p.standardInput = input ?? pipe
        try p.run()
        if input == nil {
            // A child that exits before reading its input (a usage error) closes the pipe: the write then fails with
            // EPIPE, which is not the test's concern. (`write(_:)` would trap on it; `write(contentsOf:)` throws.)
            if !stdin.isEmpty { try? pipe.fileHandleForWriting.write(contentsOf: Data(stdin.utf8)) }
            try? pipe.fileHandleForWriting.close()
        }
        let o = out.fileHandleForReading.readDataToEndOfFile()
        let e = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return Result(status: p.terminationStatus, stdout: String(decoding: o, as: UTF8.self), stderr: String(decoding: e, as: UTF8.self))
    }

    @Test func helpListsCommands() throws {
        let r = try Self.hark(["--help"])
        #expect(r.status == 0)
        for c in ["parse", "chat", "eval"] { #expect(r.stdout.contains("  \(c)")) }
        for c in ["parse", "chat", "eval"] {
            let h = try Self.hark([c, "--help"])
            #expect(h.status == 0)
            #expect(h.stdout.contains("USAGE: hark \(c)"))
        }
    }

    @Test(arguments: [["parse", "--bogus", "hi"], ["chat", "--nope"], ["eval"], ["frobnicate"], ["parse"], ["eval", "--threshold", "2", "x.jsonl"]])
    func usageErrorsExit64(args: [String]) throws {
        let r = try Self.hark(args)
        #expect(r.status == 64, "\(args): \(r.stderr)")
        #expect(!r.stderr.isEmpty)
    }

    @Test func parseJSONShape() throws {
        let r = try Self.hark(["parse", "--json", "turn", "on", "the", "lamp"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.hasPrefix(#"{"input":{"text":"turn on the lamp"},"intents":[{"intent":"OnLight","confidence":"#))
        #expect(r.stdout.contains(#""entities":[{"entity":"device","location":[12,16],"value":"light","confidence":1}]"#))
    }

    @Test func parseExplainShowsWhy() throws {
        let r = try Self.hark(["parse", "--explain", "what's the weather in Oslo"])
        #expect(r.status == 0)
        #expect(r.stdout.contains("unknown words:"))
        #expect(r.stdout.contains("oslo"))
        #expect(r.stdout.contains("calibrated confidence of the top intent"))
        #expect(r.stdout.contains("unknown that English knows"))
    }

    @Test func badWorkspaceIsADataErrorNamingThePath() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hark-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let bad = dir.appendingPathComponent("bad.json")
        try #"{"intents":[{"intent":"x","examples":[]}],"dialog_nodes":[{"dialog_node":"a","previous_sibling":"ghost"}]}"#.write(to: bad, atomically: true, encoding: .utf8)
        let r = try Self.hark(["parse", "--workspace", bad.path, "hi"])
        #expect(r.status == 65)
        #expect(r.stderr.contains("\(bad.path): dialog_nodes[0] (a).previous_sibling: refers to missing dialog node \"ghost\""))
        let missing = try Self.hark(["chat", "--workspace", dir.appendingPathComponent("none.json").path])
        #expect(missing.status == 65)
        #expect(missing.stderr.contains("none.json: no such file"))
    }

    @Test func chatCarriesContextAcrossPipedTurns() throws {
        let r = try Self.hark(["chat", "--json", "--seed", "1"], stdin: "turn on the light\nis the light on?\nturn the light off\nis the light on\n")
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 5)
        func text(_ i: Int) -> String {
            guard let d = lines[i].data(using: .utf8), let o = try? JSONSerialization.jsonObject(with: d) as? [String: Any],
                let out = o["output"] as? [String: Any], let t = out["text"] as? [String] else { return "" }
            return t.joined(separator: " ")
        }
        #expect(text(0).contains("Hark"))
        #expect(text(1) == "Light is on")
        #expect(text(2) == "The light is on.")
        #expect(text(3) == "Light is off")
        #expect(text(4) == "The light is off.")
        #expect(lines[1].contains(#""actions":[{"name":"light","type":"client","parameters":{"command":"on"}"#))
        #expect(lines[1].contains(#""conversation_id":"#))
    }

    @Test func evalReportsAccuracyAndRejection() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hark-eval-\(UUID().uuidString).jsonl")
        try """
            {"text": "please switch on the lamp", "intent": "OnLight"}
            {"text": "what's the capital of Peru", "intent": null}
            {"text": "take a photo", "intent": "TakePicture"}
            """.write(to: dir, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: dir) }
        let r = try Self.hark(["eval", "--json", dir.path])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains(#""accuracy":1"#))
        #expect(r.stdout.contains(#""rejection_rate":1"#))
        #expect(r.stdout.contains(#""parse_us":{"p50":"#))
        #expect(r.stdout.contains(#""calibration":{"ece":"#))
        let text = try Self.hark(["eval", dir.path])
        #expect(text.stdout.contains("calibration (top confidence vs right, in scope): ECE "))
        #expect(text.stdout.contains("right with confidence > 0.9"))
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("hark-eval-out-\(UUID().uuidString).jsonl")
        defer { try? FileManager.default.removeItem(at: out) }
        let withCases = try Self.hark(["eval", "--json", "--cases-out", out.path, dir.path])
        #expect(withCases.status == 0)
        let lines = try String(contentsOf: out, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 3)
        #expect(lines[1].contains(#""expected":null"#) && lines[1].contains(#""evidence":{"classifier_top":"#))
        try "{\"text\": 3}\n".write(to: dir, atomically: true, encoding: .utf8)
        let bad = try Self.hark(["eval", dir.path])
        #expect(bad.status == 65)
        #expect(bad.stderr.contains("line 1.text: missing required string"))
    }
}
