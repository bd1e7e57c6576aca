import Foundation
import HarkAudio
import HarkCore
import Testing

/// `hark run` and `hark devices` end to end through the built binary: audio from a file, typed turns on a
/// pipe, the wake phrase, SIGTERM, and configuration errors.
@Suite("hark run", .serialized)
struct RunCLITests {
    static func temporaryDirectory() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hark-run-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    /// `sentences` spoken by `hark say` (eSpeak NG) or flite, with `gap` seconds of silence around each.
    static func recording(_ sentences: [String], voice: String = "espeak", gap: Double = 1.5, in dir: URL) throws -> URL {
        var stream = PCMBuffer(format: .speech)
        let silence = PCMBuffer(format: .speech, samples: [Int16](repeating: 0, count: Int(gap * 16_000)))
        stream.append(silence)
        for (i, sentence) in sentences.enumerated() {
            let part = dir.appendingPathComponent("part\(i).wav")
            if voice == "espeak" {
                let r = try CLITests.hark(["say", "--output", part.path, sentence])
                try #require(r.status == 0, "hark say: \(r.stderr)")
            } else {
                let p = Process()
                p.executableURL = URL(fileURLWithPath: "/usr/bin/flite")
                p.arguments = ["-voice", voice, "-t", sentence, "-o", part.path]
                try p.run()
                p.waitUntilExit()
                try #require(p.terminationStatus == 0, "flite failed (scripts/setup.sh installs it)")
            }
            stream.append(try AudioFile.readSpeech(part.path))
            stream.append(silence)
        }
        let url = dir.appendingPathComponent("input.wav")
        try AudioFile.write(stream, to: url.path)
        return url
    }

    static func events(_ stdout: String) throws -> [JSONObject] {
        try stdout.split(separator: "\n").map { line in
            try #require(try JSONValue.parse(String(line)).objectValue, "not a JSON object: \(line)")
        }
    }

    static func texts(_ events: [JSONObject], _ kind: String) -> [String] {
        events.filter { $0["kind"]?.stringValue == kind }.compactMap { $0["text"]?.stringValue }
    }

    @Test("a WAV of \"turn on the light\": the simulated light goes on, the reply is spoken into a file, the log has the turn")
    func headlessTurn() throws {
        let dir = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let input = try Self.recording(["turn on the light"], in: dir)
        let output = dir.appendingPathComponent("speaker.wav")
        let data = dir.appendingPathComponent("data")
        let r = try CLITests.hark(["run", "--port", "0", "--simulate", "--input", input.path, "--fast", "--output", output.path,
                                   "--events", "--data", data.path, "--seed", "1"])
        #expect(r.status == 0, "\(r.stderr)")
        let events = try Self.events(r.stdout)
        #expect(events.first?["kind"] == "start")
        #expect(events.last?["kind"] == "stop")
        #expect(Self.texts(events, "transcript") == ["turn on the light"])
        #expect(Self.texts(events, "device") == ["Light is on"])
        #expect(Self.texts(events, "reply") == ["Light is on"])
        let action = try #require(events.first { $0["kind"] == "action" })
        #expect(action["name"] == "light" && action["command"] == "on" && action["result"] == "on")
        for e in events { #expect(e["time"]?.stringValue?.hasSuffix("Z") == true, "\(e)") }
        // The speaker file holds the earcon and the spoken reply.
        let spoken = try AudioFile.read(output.path)
        #expect(spoken.duration > 0.6)
        // The same events are in the store, and `hark events` prints them.
        let log = try CLITests.hark(["events", "--data", data.path, "--json"])
        #expect(log.status == 0, "\(log.stderr)")
        #expect(Self.texts(try Self.events(log.stdout), "reply") == ["Light is on"])
    }

    @Test("with --wake only speech after the wake phrase is a turn")
    func wakePhrase() throws {
        let dir = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let input = try Self.recording(["hey hark. turn on the light", "take a picture"], voice: "slt", in: dir)
        let r = try CLITests.hark(["run", "--port", "0", "--simulate", "--input", input.path, "--fast", "--wake", "--events",
                                   "--data", dir.appendingPathComponent("data").path, "--seed", "1"])
        #expect(r.status == 0, "\(r.stderr)")
        let events = try Self.events(r.stdout)
        #expect(events.filter { $0["kind"] == "wake" }.count == 1, "\(r.stderr)")
        #expect(Self.texts(events, "transcript") == ["turn on the light"])
        #expect(Self.texts(events, "device") == ["Light is on"])
        #expect(Self.texts(events, "picture").isEmpty, "the command without the wake phrase must not run")
    }

    @Test("typed turns on a pipe: answers, context across turns, exit at the end of input")
    func console() throws {
        let dir = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let r = try CLITests.hark(["run", "--port", "0", "--simulate", "--console", "--events", "--data", dir.path, "--seed", "1"],
                                  stdin: "turn on the light\nis the light on?\nturn off the light\nis the light on\n/pair\n")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(Self.texts(try Self.events(r.stdout), "reply") == ["Light is on", "The light is on.", "Light is off", "The light is off."])
        #expect(r.stderr.contains("simulated"), "the first line says the devices are simulated: \(r.stderr)")
        #expect(r.stderr.contains("web page and API at http://127.0.0.1:") && r.stderr.contains("pair a browser with code"), "\(r.stderr)")
        // `/pair` shows a new code (and would say it on a speaker); the log says one was issued, without the code.
        let code = try #require(r.stderr.split(separator: "\n").last { $0.contains("hark: pairing code ") })
        #expect(code.split(separator: " ").contains { $0.count == 6 && $0.allSatisfy(\.isNumber) }, "\(code)")
        let issued = try Self.events(r.stdout).filter { $0["kind"] == "state" && $0["text"]?.stringValue?.hasPrefix("Pairing code issued") == true }
        #expect(issued.count == 1)
    }

    @Test("SIGTERM stops the appliance cleanly and the log says so")
    func sigterm() throws {
        let dir = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let p = Process()
        p.executableURL = CLITests.binary
        p.arguments = ["run", "--port", "0", "--simulate", "--console", "--data", dir.path]
        p.currentDirectoryURL = CLITests.root
        let input = Pipe()
        p.standardInput = input
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        input.fileHandleForWriting.write(Data("turn on the light\n".utf8))
        // Wait until the turn is in the log, then stop it the way systemd does.
        var replied = false
        for _ in 0..<200 where !replied {
            Thread.sleep(forTimeInterval: 0.05)
            let log = try CLITests.hark(["events", "--data", dir.path, "--json", "--kind", "reply"])
            replied = log.status == 0 && log.stdout.contains("Light is on")
        }
        #expect(replied)
        p.terminate()  // SIGTERM
        p.waitUntilExit()
        #expect(p.terminationReason == .exit && p.terminationStatus == 0)
        let log = try CLITests.hark(["events", "--data", dir.path, "--json", "--kind", "stop"])
        #expect(Self.texts(try Self.events(log.stdout), "stop") == ["Hark stopped"])
    }

    @Test("configuration problems are clear errors with the right exit status", arguments: [
        (#"{"simulate": false}"#, Int32(69), "gpio.chip: no GPIO chip \"gpiochip0\""),
        (#"{"gpio": {"chip": 3}}"#, Int32(65), "gpio.chip: expected a non-empty string"),
        (#"{"camera": {"widht": 320}}"#, Int32(65), "camera.widht: unknown field"),
    ])
    func configurationErrors(text: String, status: Int32, message: String) throws {
        let dir = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let config = dir.appendingPathComponent("hark.json")
        try text.write(to: config, atomically: true, encoding: .utf8)
        let r = try CLITests.hark(["run", "--port", "0", "--config", config.path, "--console", "--data", dir.path])
        #expect(r.status == status)
        #expect(r.stderr.contains(message), "\(r.stderr)")
        #expect(r.stderr.contains(config.path) || status == 69, "\(r.stderr)")
    }

    @Test("bad arguments and missing files", arguments: [
        (["run", "--fast"], Int32(64), "--fast and --wake need --input"),
        (["run", "--input", "/nonexistent/x.wav"], Int32(66), "/nonexistent/x.wav"),
        (["run", "--config", "/nonexistent/hark.json"], Int32(66), "/nonexistent/hark.json"),
        (["run", "--loud"], Int32(64), "--loud"),
    ])
    func badArguments(args: [String], status: Int32, message: String) throws {
        let r = try CLITests.hark(args)
        #expect(r.status == status)
        #expect(r.stderr.contains(message), "\(r.stderr)")
    }

    @Test("hark devices shows the machine and the configuration's mapping; an unopenable device is exit 69")
    func devices() throws {
        let r = try CLITests.hark(["devices"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("GPIO chips:") && r.stdout.contains("Cameras (V4L2):") && r.stdout.contains("Audio (ALSA):"))
        #expect(r.stdout.contains("light: "))
        let json = try CLITests.hark(["devices", "--json"])
        let object = try #require(try JSONValue.parse(json.stdout).objectValue)
        #expect(object["configuration"]?["devices"]?.arrayValue?.isEmpty == false)
        let dir = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let config = dir.appendingPathComponent("real.json")
        try #"{"simulate": false}"#.write(to: config, atomically: true, encoding: .utf8)
        if !FileManager.default.fileExists(atPath: "/dev/gpiochip0") {
            let real = try CLITests.hark(["devices", "--config", config.path])
            #expect(real.status == 69)
            #expect(real.stdout.contains("error: gpio.chip"))
        }
    }
}
