import Foundation
import HarkAppliance
import HarkAudio
import HarkCore
import HarkDevices
import HarkHTTP
import HarkRooms
import HarkServer
import HarkSpeech

/// `hark run`: the appliance. Listens (wake phrase, button, console), understands, answers aloud, acts.
enum RunCommand: Command {
    static let name = "run"
    static let abstract = "Run the appliance: wake phrase, button or console → dialog → speech and devices"
    static let usage = """
        USAGE: hark run [--config FILE] [--workspace PATH] [--data DIR] [--simulate] [--events]
                        [--input FILE [--fast] [--wake]] [--output FILE.wav] [--console] [--seed N]

        The always-on loop: idle → listening (LED on, a beep) → understanding → speaking and acting → idle,
        or straight back to listening while the dialog waits for an answer. Turns start with the wake
        phrase, the push-to-talk button, a typed line on the console (Enter alone = listen; `/pair` shows
        and says a pairing code for the web page). Standard input from a pipe or a file is typed lines too
        (`printf 'turn on the light\n' | hark run`): without a microphone the run ends with it. Every turn,
        device change, picture and error goes to the event log (`hark events`). Missing hardware is
        simulated when the machine has none, and the first line says so. SIGINT/SIGTERM stop cleanly.
          --config FILE     configuration (JSON, `//` comments; every field has a default: deploy/hark.json)
          --workspace PATH  overrides the configuration's workspace (default Intents/home.json)
          --data DIR        overrides the configuration's data directory (event log, pictures)
          --simulate        simulated GPIO chip and camera even where real ones exist
          --events          one JSON event per line on standard output (wake, listening, transcript,
                            intent, reply, action, device, picture, error, state, start, stop)
          --input FILE      audio from FILE instead of the microphone, paced like a microphone; each
                            stretch of speech is one turn, as if the button were pressed for it; exits
                            once the file is consumed and its turns are complete
          --fast            with --input: as fast as the machine can go, not in real time
          --wake            with --input: turns start only after the wake phrase, as with a microphone
          --output FILE.wav the speaker's audio (earcons and replies) to a file instead of ALSA
          --console         read typed turns from standard input whatever it is (a terminal, a pipe or a
                            file need no flag; /dev/null, as under systemd, is otherwise not read); the
                            run ends with the input when there is no audio input
          --seed N          seed for random reply variations
          --port N          serve the web page and API on port N (default: the configuration's, 8080)
          --no-server       do not start the web page and API
        """

    static func run(_ args: inout Arguments) throws -> Int32 {
        let configPath = try args.option("--config")
        let workspaceOverride = try args.option("--workspace")
        let dataOverride = try args.option("--data")
        let simulate = try args.flag("--simulate")
        let events = try args.flag("--events")
        let input = try args.option("--input")
        let fast = try args.flag("--fast")
        let wakeFromFile = try args.flag("--wake")
        let output = try args.option("--output")
        let consoleFlag = try args.flag("--console")
        let seed = try args.option("--seed", parse: { UInt64($0) }, expected: "a whole number")
        let port = try args.option("--port", parse: { Int($0).flatMap { (0...65_535).contains($0) ? $0 : nil } }, expected: "a port number 0…65535")
        let noServer = try args.flag("--no-server")
        try args.finish()
        if input == nil && (fast || wakeFromFile) { throw UsageError(message: "--fast and --wake need --input FILE") }

        let setup = try ApplianceSetup.load(configPath: configPath, workspace: workspaceOverride, data: dataOverride, simulate: simulate)
        let configuration = setup.configuration
        let workspace = setup.workspace
        let devices = setup.devices
        // What this machine lacks, for the one line that says how the appliance runs anyway.
        var missing: [String] = []
        var details: [String] = []

        // Ears: a file, or the microphone; without one the appliance still runs on typed input.
        var audio: (any AudioSource)?
        let mode: Appliance.AudioMode
        if let input {
            do {
                let file = try AudioFileSource(path: input, convertingTo: .speech)
                audio = fast ? file : PacedAudioSource(file)
            } catch let error as SndfileError {
                throw CommandFailure(message: error.description, exitCode: error.kind == .missingFile ? 66 : 65)
            }
            mode = wakeFromFile ? .wake : .everySpeech
        } else {
            do {
                audio = try ALSACapture(device: configuration.captureDevice, format: .speech, configFile: configuration.alsaConfigFile)
            } catch {
                missing.append("microphone")
                details.append("microphone: ALSA '\(configuration.captureDevice)': \(error.message)")
            }
            mode = configuration.wakeEnabled ? .wake : .triggered
        }

        // Voice: a file, or the speaker.
        let synthesizer = try setup.synthesizer()
        var speaker: (any AudioSink)?
        if let output {
            do { speaker = try AudioFileSink(path: output, format: SpeechSynthesizer.playbackFormat) } catch {
                throw CommandFailure(message: "--output \(output): \(error)", exitCode: 73)
            }
        } else {
            do {
                speaker = try ALSAPlayback(device: configuration.playbackDevice, format: SpeechSynthesizer.playbackFormat, configFile: configuration.alsaConfigFile)
            } catch {
                missing.append("speaker")
                details.append("speaker: ALSA '\(configuration.playbackDevice)': \(error.message)")
            }
        }

        // Speech recognition and the wake phrase, only when there is audio to hear.
        var recognizer: SpeechRecognizer?
        var wake: (any WakeDetector)?
        if audio != nil {
            let model = setup.speechModel
            recognizer = try SpeechCLI.recognizer(workspace: workspace, model: model, options: setup.configuration.recognitionOptions)
            if mode == .wake {
                wake = try SpeechCLI.wakeSpotter(settingsPath: configuration.wakeSettings.map { configuration.resolve($0) }, model: model)
            }
        }

        let interactive = isatty(0) == 1
        // Lines piped in or redirected from a file are turns, as someone typing `printf … | hark run` expects.
        // /dev/null (systemd's default standard input) or a closed descriptor is not a console: its immediate
        // end of input would otherwise end an appliance that has no microphone.
        let piped = StandardInput.isPipeOrFile
        let console = interactive || consoleFlag || piped
        let simulatedGPIO = devices.simulated.contains { $0 != DeviceSet.cameraName }
        let simulatedCamera = devices.simulated.contains(DeviceSet.cameraName)
        if simulatedGPIO && configuration.simulate == .auto { missing.append("GPIO chip") }
        if simulatedCamera && configuration.simulate == .auto { missing.append("camera") }
        var line = "hark: running \(workspace.name)"
        if !missing.isEmpty { line += "; this machine has no \(listed(missing, "or"))" }
        var ways: [String] = []
        if simulatedGPIO || simulatedCamera {
            ways.append("simulated \(listed(devices.simulated.map { $0 == "led" ? "LED" : $0 }, "and"))")
        }
        if let input {
            ways.append("audio from \(input)" + (wakeFromFile ? " after the wake phrase" : ""))
        } else if audio != nil {
            ways.append(mode == .wake ? "say the wake phrase" : "press the button")
        }
        if audio == nil {
            if !console {
                ways.append("no console: waiting for a signal")
            } else {
                ways.append(piped && !interactive ? "requests from standard input" : "type a request")
            }
        }
        if speaker == nil { ways.append("replies printed, not spoken") }
        printError(line + (ways.isEmpty ? "" : ": " + ways.joined(separator: "; ")) + ".")
        for detail in details { printError("  \(detail)") }

        let printer = EventPrinter(json: events, interactive: interactive && !events)
        let turns = setup.turns(seed: seed) { event, id in printer.print(event, id: id) }
        let appliance = try Appliance(
            configuration: configuration, turns: turns, recognizer: recognizer, wake: wake, synthesizer: synthesizer, speaker: speaker)

        let stop = SignalStop(triggers: appliance.triggers)
        defer { stop.cancel() }
        let server = configuration.serverEnabled && !noServer
            ? try startServer(setup, appliance: appliance, synthesizer: synthesizer, spoken: speaker != nil, port: port) : nil
        defer { server?.stop() }
        if configuration.roomServer != nil { try joinRemoteRooms(setup, appliance: appliance) }
        let wyoming = try WyomingCommand.startInside(setup, turns: appliance.turns)
        defer { wyoming?.stop() }
        if console { ConsoleReader.start(posting: appliance.triggers) }
        let status = appliance.run(audio: audio, mode: mode, exitWhenInputEnds: input != nil || (audio == nil && console && !interactive))
        do { try speaker?.drain() } catch { printError("hark run: finishing the audio output: \(error)") }
        return status
    }

    /// The web page and API beside the voice loop, on the loop's turn runner; `nil` when the server cannot
    /// start (a `CommandFailure`), which is reported and leaves the voice loop running. `spoken`: `/api/say` goes to the loop's
    /// speaker between turns.
    static func startServer(
        _ setup: ApplianceParts, appliance: Appliance, synthesizer: SpeechSynthesizer, spoken: Bool, port: Int?
    ) throws -> ServerSetup.Started? {
        // Web push-to-talk gets a recogniser of its own, so it never waits for the microphone's.
        let webRecognizer: SpeechRecognizer?
        do {
            webRecognizer = try SpeechCLI.recognizer(workspace: setup.workspace, model: setup.speechModel, options: setup.configuration.recognitionOptions)
        } catch {
            // Typed turns still work; the page's push-to-talk answers "unavailable". Said once, not left to be found.
            printError("hark: warning: the web page's push-to-talk is off: its recogniser could not be made: \(error)")
            webRecognizer = nil
        }
        let triggers = appliance.triggers
        var speak: (@Sendable (String) -> Bool)?
        var play: (@Sendable ([Int16]) -> Bool)?
        if spoken {
            // Spoken by the loop, between turns, on the one speaker.
            speak = { text in
                triggers.post(.say(text))
                return true
            }
            play = { samples in
                triggers.post(.play(PCMBuffer(format: .speech, samples: samples)))
                return true
            }
        }
        let server: ServerSetup.Started
        do {
            server = try ServerSetup.start(
                configuration: setup.configuration, dataDirectory: setup.dataDirectory, turns: appliance.turns, pictures: setup.pictures,
                recognizer: webRecognizer, synthesizer: synthesizer, speak: speak, play: play, speechModel: setup.speechModel, port: port)
        } catch let failure as CommandFailure {
            // The voice loop does not need the page: a taken port must not silence the appliance.
            printError("hark: the web page and API are off: \(failure.message)")
            appliance.turns.recorder.record(.error, "server: \(failure.message)", ["source": "server"])
            return nil
        }
        // An appliance linked to another's rooms (`rooms.server`) is in those, not its own server's.
        if let roomAudio = server.roomAudio, setup.configuration.roomServer == nil {
            joinRooms(setup.configuration, audio: roomAudio, appliance: appliance)
        }
        let auth = server.auth
        appliance.pairingCode = { try? auth.issuePairingCode(lifetime: AuthService.defaultPairingCodeLifetime) }
        appliance.printPairingCode = { code in printError("hark: pairing code \(code) (valid 5 minutes) for \(server.url)") }
        printError("hark: web page and API at \(server.url)" + (server.pairingCode.map { "; pair a browser with code \($0) (valid 5 minutes; `hark pair` makes another)" } ?? ""))
        return server
    }

    /// Makes the appliance a possible member of its server's rooms (by voice, from the page) and joins the
    /// configuration's `rooms.join` room now; a room that cannot be joined is reported, not fatal.
    static func joinRooms(_ configuration: ApplianceConfiguration, audio: RoomAudio, appliance: Appliance) {
        let member = ApplianceMember(audio: audio, echoCancellation: configuration.roomEchoCancellation)
        appliance.turns.roomLink.install(member)
        guard let name = configuration.roomJoin else { return }
        do {
            let outcome = try member.joinOrCreate(displayName: name)
            printError("hark: in room \(outcome.room ?? name) as \(audio.rooms.applianceName) (rooms.join)")
            appliance.turns.recorder.record(.state, "Room: \(outcome.message)", ["source": "rooms", "room": .string(outcome.roomID ?? "")])
        } catch {
            printError("hark: rooms.join: cannot join \"\(name)\": \(error.message)")
            appliance.turns.recorder.record(.error, "rooms.join: \(error.message)", ["source": "rooms"])
        }
    }

    /// Makes the appliance a member of the rooms of the server `rooms.server` names (linked by `hark link`) and
    /// joins `rooms.join` there, making it if needed. A missing or mismatched link is an error naming the field
    /// and the fix; a room that cannot be joined now is reported, and the appliance runs on.
    static func joinRemoteRooms(_ setup: ApplianceParts, appliance: Appliance) throws {
        let configuration = setup.configuration
        guard let server = configuration.roomServer else { return }
        let file = RoomsLink.fileURL(in: setup.dataDirectory)
        let link: RoomsLink
        do throws(RoomsError) { link = try RoomsLink.load(from: file) } catch {
            throw CommandFailure(message: "rooms.server: \(error.message)", exitCode: error.kind == .notFound ? 66 : 65)
        }
        let wanted = try? ServerAddress(url: server)
        guard let wanted, (try? link.address) == wanted else {
            throw CommandFailure(message: "rooms.server: \(server) is not the server \(file.path) links to (\(link.server)); run `hark link \(server) CODE`", exitCode: 65)
        }
        let recorder = appliance.turns.recorder
        let name = configuration.roomName ?? ProcessInfo.processInfo.hostName
        let member: RemoteRoomMember
        do throws(RoomsError) {
            member = try RemoteRoomMember(link: link, name: name, echoCancellation: configuration.roomEchoCancellation) { message, isError in
                printError("hark: rooms: \(message)")
                recorder.record(isError ? .error : .state, "Room: \(message)", ["source": "rooms"])
            }
        } catch {
            throw CommandFailure(message: error.message)
        }
        appliance.turns.roomLink.install(member)
        appliance.turns.roomLink.installAnnouncer { announcement in member.announce(announcement.text, voice: announcement.voice) }
        printError("hark: rooms are those of \(wanted), as \(name)")
        guard let join = configuration.roomJoin else { return }
        let outcome = member.joinOrCreateWhenReachable(displayName: join)
        if outcome.status == .joined || outcome.status == .already {
            printError("hark: in room \(outcome.room ?? join) on \(wanted) as \(name) (rooms.join)")
            recorder.record(.state, "Room: \(outcome.message)", ["source": "rooms", "room": .string(outcome.roomID ?? "")])
        } else {
            printError("hark: rooms.join: cannot join \"\(join)\" on \(wanted): \(outcome.message)")
            recorder.record(.error, "rooms.join: \(outcome.message)", ["source": "rooms"])
        }
    }

    /// "a, b and c".
    static func listed(_ items: [String], _ conjunction: String) -> String {
        items.count <= 1 ? items.joined() : items.dropLast().joined(separator: ", ") + " \(conjunction) " + items.last!
    }

}

/// Stops the loop on SIGINT and SIGTERM: the current turn finishes, the LED goes off, the log is closed.
final class SignalStop {
    private let sources: [any DispatchSourceSignal]

    init(triggers: TriggerQueue) {
        sources = [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { triggers.post(.stop) }
            source.resume()
            return source
        }
    }

    func cancel() { for s in sources { s.cancel() } }
}

/// What standard input is, for deciding whether to read typed turns from it.
enum StandardInput {
    /// True when standard input is a pipe or a regular file (`printf … | hark run`, `hark run < turns.txt`);
    /// false for a terminal, a character device such as /dev/null, a socket, or a closed descriptor.
    static var isPipeOrFile: Bool {
        var status = stat()
        guard fstat(0, &status) == 0 else { return false }
        let type = status.st_mode & S_IFMT
        return type == S_IFIFO || type == S_IFREG
    }
}

/// Reads typed turns from standard input on its own thread: a line is a text turn, an empty line asks
/// the appliance to listen, the end of input is reported.
///
/// Lines come from `read(2)` on descriptor 0, not `readLine()`: stdio's `getline` holds `stdin`'s lock while it
/// blocks, and glibc 2.41 (Debian 13) takes that lock in `exit`, so after SIGTERM the process hung on the
/// way out while this thread waited for input (docs/debian13.md).
enum ConsoleReader {
    static func start(posting triggers: TriggerQueue) {
        let thread = Thread {
            var input = DescriptorLines(descriptor: 0)
            while true {
                guard let line = input.next() else {
                    triggers.post(.inputClosed(source: .console))
                    return
                }
                let text = line.trimmingCharacters(in: .whitespacesAndNewlines)
                if text == "/pair" {
                    triggers.post(.pair)
                } else {
                    triggers.post(text.isEmpty ? .listen(source: .console) : .text(text, source: .console))
                }
            }
        }
        thread.name = "hark console"
        thread.start()
    }
}

/// Lines read from a file descriptor with `read(2)`, newline removed; the last line may lack one.
struct DescriptorLines {
    let descriptor: Int32
    private var pending: [UInt8] = []
    private var ended = false

    init(descriptor: Int32) { self.descriptor = descriptor }

    /// The next line, or nil at the end of input (or on a read error other than EINTR).
    mutating func next() -> String? {
        while true {
            if let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: pending[..<newline], as: UTF8.self)
                pending.removeSubrange(...newline)
                return line
            }
            if ended {
                guard !pending.isEmpty else { return nil }
                defer { pending.removeAll() }
                return String(decoding: pending, as: UTF8.self)
            }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { ended = true } else { pending.append(contentsOf: chunk[..<count]) }
        }
    }
}
