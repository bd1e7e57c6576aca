import Foundation
import HarkAppliance
import HarkAudio
import HarkCore
import HarkRooms
import HarkServer
import HarkSpeech

/// `hark serve`: the companion web page and API alone, without the microphone loop (`hark run` serves them
/// too, in the same process as the loop).
enum ServeCommand: Command {
    static let name = "serve"
    static let abstract = "Serve the web page and the Watson-compatible API (without the microphone loop)"
    static let usage = """
        USAGE: hark serve [--config FILE] [--workspace PATH] [--data DIR] [--host ADDR] [--port N] [--lan]
                          [--simulate] [--events] [--print-port] [--seed N] [--room-idle DURATION]

        The companion server (docs/server-api.md): the chat page at /, pairing and login, Watson's
        POST /v1/workspaces/{id}/message, live events, pictures, devices, speech, push-to-talk. Listens on
        127.0.0.1:8080 unless told otherwise; --lan listens on every interface with HTTPS (a self-signed
        certificate made on first run and kept under the data directory). Prints a pairing code; SIGINT or
        SIGTERM stops it.
          --config FILE     configuration (deploy/hark.json); --host/--port/--lan override its server section
          --workspace PATH  the workspace to serve (default Intents/home.json)
          --data DIR        data directory: event log, pictures, auth secrets, certificate
          --simulate        simulated GPIO and camera even where real ones exist
          --events          one JSON event per line on standard output
          --print-port      print the bound port alone on the first line of standard output (with --port 0)
          --seed N          seed for random reply variations
          --room-idle DURATION  a drop-in room nobody has joined for this long closes: 90s, 30m, 2h (default 1h)
        """

    static func run(_ args: inout Arguments) throws -> Int32 {
        let configPath = try args.option("--config")
        let workspaceOverride = try args.option("--workspace")
        let dataOverride = try args.option("--data")
        let host = try args.option("--host")
        let port = try args.option("--port", parse: { Int($0).flatMap { (0...65_535).contains($0) ? $0 : nil } }, expected: "a port number 0…65535")
        let lan = try args.flag("--lan")
        let simulate = try args.flag("--simulate")
        let events = try args.flag("--events")
        let printPort = try args.flag("--print-port")
        let seed = try args.option("--seed", parse: { UInt64($0) }, expected: "a whole number")
        let roomIdle = try args.option("--room-idle", parse: { PairCommand.parseDuration($0).flatMap { $0 > .zero ? $0 : nil } },
                                       expected: "a duration like 90s, 30m or 2h")
        try args.finish()

        var setup = try ApplianceSetup.load(configPath: configPath, workspace: workspaceOverride, data: dataOverride, simulate: simulate)
        if lan { setup.configuration.serverLAN = true }
        let configuration = setup.configuration
        let printer = EventPrinter(json: events, interactive: false)
        let turns = setup.turns(seed: seed) { event, id in printer.print(event, id: id) }

        let synthesizer = try setup.synthesizer()
        let recognizer = try SpeechCLI.recognizer(workspace: setup.workspace, model: setup.speechModel, options: setup.configuration.recognitionOptions)
        let speaker = try? ALSAPlayback(
            device: configuration.playbackDevice, format: SpeechSynthesizer.playbackFormat,
            configFile: configuration.alsaConfigFile)
        let speakerLine = speaker.map { SpeakerLine(speaker: $0, synthesizer: synthesizer) }
        let speak: (@Sendable (String) -> Bool)? = speakerLine.map { $0.say }
        let play: (@Sendable ([Int16]) -> Bool)? = speakerLine.map { $0.play }

        let started = try ServerSetup.start(
            configuration: configuration, dataDirectory: setup.dataDirectory, turns: turns, pictures: setup.pictures,
            recognizer: recognizer, synthesizer: synthesizer, speak: speak, play: play, speechModel: setup.speechModel, host: host, port: port,
            roomIdleClose: roomIdle ?? Rooms.defaultIdleClose)
        turns.roomLink.install(NoAppliance())
        if printPort { Output.line(String(started.server.port)) }
        var line = "hark: serving \(setup.workspace.name) at \(started.url)"
        if let code = started.pairingCode { line += "; pair a browser with code \(code) (valid 5 minutes)" }
        if !setup.devices.simulated.isEmpty { line += "; simulated \(setup.devices.simulated.joined(separator: ", "))" }
        if speaker == nil { line += "; no speaker: /api/say answers 503" }
        printError(line)

        let triggers = TriggerQueue()
        let stop = SignalStop(triggers: triggers)
        defer { stop.cancel() }
        turns.recorder.record(.start, "Hark server is running", ["url": .string(started.url)])
        while !triggers.wait(timeout: 1).contains(.stop) {}
        started.stop()
        turns.recorder.record(.stop, "Hark server stopped")
        return 0
    }
}

/// The speaker for `hark serve`'s `/api/say`: one sentence at a time.
final class SpeakerLine: @unchecked Sendable {
    // @unchecked: the ALSA handle is only used with `lock` held.
    private let speaker: ALSAPlayback
    private let synthesizer: SpeechSynthesizer
    private let lock = NSLock()

    init(speaker: ALSAPlayback, synthesizer: SpeechSynthesizer) {
        self.speaker = speaker
        self.synthesizer = synthesizer
    }

    func say(_ text: String) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        do {
            _ = try synthesizer.speak(text, to: speaker)
            return true
        } catch {
            return false
        }
    }

    /// Plays 16 kHz mono samples (an announcement in someone's own voice).
    func play(_ samples: [Int16]) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        do {
            try speaker.write(PCMBuffer(format: .speech, samples: samples).converted(to: speaker.format))
            return true
        } catch {
            return false
        }
    }
}

/// `hark serve`'s answer to "drop in on …" and "hang up": it hosts rooms, but has no microphone and speaker of its
/// own to bring into one.
private final class NoAppliance: RoomPresence {
    static let reason = "hark serve has no microphone or speaker of its own to bring into a room (hark run has)"
    var currentRoom: (id: String, name: String)? { nil }
    func join(named name: String, said: String?, text: String?) -> RoomOutcome { RoomOutcome(.unavailable, asked: name, message: Self.reason) }
    func leave() -> RoomOutcome { RoomOutcome(.unavailable, message: Self.reason) }
    func exchange(microphone: PCMBuffer) -> RoomExchange { RoomExchange(microphone: microphone, mix: PCMBuffer(format: microphone.format)) }
}
