import Foundation
import HarkAudio
import HarkCore
import Testing

/// `hark run` and `hark devices` end to end through the built binary: audio from a file, typed turns on a
/// pipe or from a file, the wake phrase, SIGTERM, and configuration errors.
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

    /// `hark run ARGS` with `stdin` as its standard input, stopped by SIGTERM after `limit` seconds (`timeout`
    /// exits 124 then): a run that waits for a signal instead of ending with its input fails, never hangs.
    static func run(_ args: [String], stdin: FileHandle, limit: Int = 120) throws -> CLITests.Result {
        try CLITests.execute(URL(fileURLWithPath: "/usr/bin/timeout"), [String(limit), CLITests.binary.path, "run"] + args, input: stdin)
    }

    @Test("standard input from a pipe or a file is typed turns without --console; the run ends with it", arguments: ["pipe", "file"])
    func pipedWithoutConsoleFlag(kind: String) throws {
        let dir = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let lines = "turn on the light\nis the light on?\nturn off the light\nquit\n"
        let stdin: FileHandle
        if kind == "file" {
            let file = dir.appendingPathComponent("turns.txt")
            try lines.write(to: file, atomically: true, encoding: .utf8)
            stdin = try FileHandle(forReadingFrom: file)
        } else {
            let pipe = Pipe()
            pipe.fileHandleForWriting.write(Data(lines.utf8))  // well under a pipe's buffer
            try pipe.fileHandleForWriting.close()
            stdin = pipe.fileHandleForReading
        }
        let r = try Self.run(["--port", "0", "--simulate", "--events", "--data", dir.appendingPathComponent("data").path, "--seed", "1"], stdin: stdin)
        try? stdin.close()
        #expect(r.status == 0, "status \(r.status) (124: still waiting at the time limit): \(r.stderr)")
        let events = try Self.events(r.stdout)
        // Every line is a turn, in order, with its context: "quit" is just another sentence, answered by the dialog.
        #expect(Self.texts(events, "transcript") == ["turn on the light", "is the light on?", "turn off the light", "quit"])
        let replies = Self.texts(events, "reply")
        #expect(Array(replies.prefix(3)) == ["Light is on", "The light is on.", "Light is off"])
        #expect(replies.count == 4 && replies.allSatisfy { !$0.isEmpty }, "\(replies)")
        // "quit" is #HangUp: the room action runs, and answers that the appliance is in no room.
        #expect(events.filter { $0["kind"] == "action" }.compactMap { $0["command"]?.stringValue } == ["on", "off", "leave"])
        #expect(replies.last == "You are not in a room.")
        #expect(events.last?["kind"] == "stop" && events.last?["text"] == "Input ended", "\(events.last.map { "\($0)" } ?? "no events")")
        let first = r.stderr.split(separator: "\n").first { $0.hasPrefix("hark: running") } ?? ""
        #expect(first.contains("requests from standard input"), "\(r.stderr)")
    }

    @Test("standard input from /dev/null (systemd's default) is not a console: the appliance runs until SIGTERM")
    func devNullWaitsForASignal() throws {
        let dir = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let p = Process()
        p.executableURL = CLITests.binary
        p.arguments = ["run", "--port", "0", "--simulate", "--data", dir.path]
        p.currentDirectoryURL = CLITests.root
        p.standardInput = FileHandle.nullDevice
        p.standardOutput = FileHandle.nullDevice
        let err = Pipe()
        p.standardError = err
        try p.run()
        // Wait until the loop is running (its start event is in the log), then stop it the way systemd does.
        var started = false
        for _ in 0..<400 where !started {
            Thread.sleep(forTimeInterval: 0.05)
            let log = try CLITests.hark(["events", "--data", dir.path, "--json", "--kind", "start"])
            started = log.status == 0 && log.stdout.contains("Hark is running")
        }
        #expect(started)
        p.terminate()  // SIGTERM; harmless if it has already exited
        let e = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        #expect(p.terminationReason == .exit && p.terminationStatus == 0, "\(e)")
        #expect(e.contains("no console: waiting for a signal"), "\(e)")
        // Stopped by the signal, not ended by the empty input.
        let log = try CLITests.hark(["events", "--data", dir.path, "--json", "--kind", "stop"])
        #expect(Self.texts(try Self.events(log.stdout), "stop") == ["Hark stopped"])
    }

    @Test("configuration problems are clear errors with the right exit status", arguments: [
        (#"{"simulate": false}"#, Int32(69), "gpio.chip: not set, and there is no GPIO chip to default to"),
        (#"{"simulate": false, "gpio": {"chip": "gpiochip0"}}"#, Int32(69), "gpio.chip: no GPIO chip \"gpiochip0\""),
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

    @Test("rooms.server needs a link to that server, made by hark link, whose own bad arguments are usage errors")
    func roomsServerNeedsALink() throws {
        let dir = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let config = dir.appendingPathComponent("hark.json")
        try #"{"rooms": {"server": "http://127.0.0.1:9"}}"#.write(to: config, atomically: true, encoding: .utf8)
        let unlinked = try CLITests.hark(["run", "--port", "0", "--config", config.path, "--console", "--data", dir.path])
        #expect(unlinked.status == 66)
        #expect(unlinked.stderr.contains("rooms.server:") && unlinked.stderr.contains("hark link URL CODE"), "\(unlinked.stderr)")
        // A link to another server is not this one.
        try #"{"server": "http://127.0.0.1:10", "token": "x"}"#.write(to: dir.appendingPathComponent("rooms-link.json"), atomically: true, encoding: .utf8)
        let other = try CLITests.hark(["run", "--port", "0", "--config", config.path, "--console", "--data", dir.path])
        #expect(other.status == 65)
        #expect(other.stderr.contains("is not the server") && other.stderr.contains("hark link http://127.0.0.1:9 CODE"), "\(other.stderr)")
        // An https link without the pinned certificate is refused, naming the field.
        try #"{"server": "https://127.0.0.1:9", "token": "x"}"#.write(to: dir.appendingPathComponent("rooms-link.json"), atomically: true, encoding: .utf8)
        let unpinned = try CLITests.hark(["run", "--port", "0", "--config", config.path, "--console", "--data", dir.path])
        #expect(unpinned.status == 65 && unpinned.stderr.contains("certificate_sha256"), "\(unpinned.stderr)")

        for (args, message) in [(["link", "ftp://x", "123456"], "URL:"), (["link", "http://x:1", "12"], "CODE:"),
                                (["link", "http://x:1"], "expected URL and CODE"),
                                (["link", "http://x:1", "123456", "--fingerprint", "ab"], "--fingerprint")] {
            let r = try CLITests.hark(args + ["--data", dir.path])
            #expect(r.status == 64 && r.stderr.contains(message), "\(args): \(r.stderr)")
        }
        let nobody = try CLITests.hark(["link", "http://127.0.0.1:9", "123456", "--data", dir.path])
        #expect(nobody.status == 1 && nobody.stderr.contains("cannot connect to http://127.0.0.1:9"), "\(nobody.stderr)")
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
