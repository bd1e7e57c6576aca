import Foundation
import HarkAppliance
import HarkCore
import HarkSpeech
import HarkWyoming

/// `hark wyoming`: Hark's speech, wake phrase, intents and dialog as Home Assistant Wyoming services.
enum WyomingCommand: Command {
    static let name = "wyoming"
    static let abstract = "Serve speech, wake phrase, intents and dialog to Home Assistant (Wyoming protocol)"
    static let allServices = ["asr", "tts", "wake", "intent", "handle"]
    static let version = "1.0.0"
    static let usage = """
        USAGE: hark wyoming [--uri tcp://HOST:PORT] [--config FILE] [--workspace PATH] [--data DIR] [--simulate]
                            [--services LIST] [--events] [--print-port] [--seed N] [limits]

        Serves the Wyoming protocol (docs/wyoming.md) on one TCP port: asr (the workspace's grammar, with
        acoustic rejection), tts (eSpeak NG), wake (the wake phrase), intent (the workspace's matcher) and
        handle (the dialog, running its actions on the devices; simulated where the machine has none). In
        Home Assistant: Settings → Devices & services → Add integration → Wyoming Protocol, this host and port.
        SIGINT or SIGTERM stops it.
          --uri URI         where to listen (default \(WyomingAddress.default); tcp://0.0.0.0:10700 for the LAN;
                            port 0: any free port)
          --config FILE     configuration (deploy/hark.json): workspace, voice, thresholds, wake settings, devices
          --workspace PATH  overrides the configuration's workspace (default Intents/home.json)
          --data DIR        overrides the configuration's data directory (the event log of handled turns)
          --simulate        simulated GPIO and camera even where real ones exist
          --services LIST   comma-separated subset of \(allServices.joined(separator: ",")) (default: all)
          --events          one JSON event per line on standard output for each handled turn
          --print-port      print the bound port alone on the first line of standard output
          --seed N          seed for random reply variations
        Limits (each, when hit, is an error event naming it):
          --max-clients N          clients at once (default \(WyomingLimits().connections))
          --max-header-bytes N     header line (default \(WyomingLimits().headerBytes))
          --max-data-bytes N       data_length (default \(WyomingLimits().dataBytes))
          --max-payload-bytes N    payload_length (default \(WyomingLimits().payloadBytes))
          --max-audio-seconds S    audio in one transcription (default \(Int(WyomingLimits().transcribeSeconds)))
          --idle-timeout S         close a client silent this long (default \(Int(WyomingLimits().idleTimeout)))
          --recognizers N          PocketSphinx recognisers shared by all clients (default \(WyomingLimits().recognizers))
          --no-partials            no transcript-chunk while audio arrives (partials compete with the final decode
                                   for the CPU; the final transcript is the same)
        """

    static func run(_ args: inout Arguments) throws -> Int32 {
        let uri = try args.option("--uri")
        let configPath = try args.option("--config")
        let workspaceOverride = try args.option("--workspace")
        let dataOverride = try args.option("--data")
        let simulate = try args.flag("--simulate")
        let servicesList = try args.option("--services")
        let events = try args.flag("--events")
        let printPort = try args.flag("--print-port")
        let seed = try args.option("--seed", parse: { UInt64($0) }, expected: "a whole number")
        var limits = WyomingLimits()
        func count(_ flag: String, _ range: ClosedRange<Int>) throws -> Int? {
            try args.option(flag, parse: { Int($0).flatMap { range.contains($0) ? $0 : nil } }, expected: "a whole number \(range.lowerBound)…\(range.upperBound)")
        }
        func seconds(_ flag: String) throws -> Double? {
            try args.option(flag, parse: { Double($0).flatMap { $0 > 0 && $0 <= 86_400 ? $0 : nil } }, expected: "seconds, more than 0 and at most 86400")
        }
        if let n = try count("--max-clients", 1...10_000) { limits.connections = n }
        if let n = try count("--max-header-bytes", 64...16 << 20) { limits.headerBytes = n }
        if let n = try count("--max-data-bytes", 64...64 << 20) { limits.dataBytes = n }
        if let n = try count("--max-payload-bytes", 64...64 << 20) { limits.payloadBytes = n }
        if let s = try seconds("--max-audio-seconds") { limits.transcribeSeconds = s }
        if let s = try seconds("--idle-timeout") { limits.idleTimeout = s }
        if let n = try count("--recognizers", 1...16) { limits.recognizers = n }
        if try args.flag("--no-partials") { limits.partialTranscripts = false }
        try args.finish()

        let address: WyomingAddress
        do { address = try uri.map { u throws(WyomingAddressError) in try WyomingAddress(uri: u) } ?? .default } catch {
            throw UsageError(message: "--uri \(error.message)")
        }
        let wanted = servicesList.map { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } } ?? allServices
        if let unknown = wanted.first(where: { !allServices.contains($0) }) {
            throw UsageError(message: "--services: unknown service \"\(unknown)\" (known: \(allServices.joined(separator: ", ")))")
        }
        guard !wanted.isEmpty else { throw UsageError(message: "--services: name at least one of \(allServices.joined(separator: ", "))") }

        let setup = try ApplianceSetup.load(configPath: configPath, workspace: workspaceOverride, data: dataOverride, simulate: simulate)
        let printer = EventPrinter(json: events, interactive: false)
        let turns = setup.turns(seed: seed) { event, id in printer.print(event, id: id) }
        let services = try services(wanted, of: setup, turns: turns, limits: limits)
        let server = try start(services, at: address, limits: limits, flag: "--uri")
        if printPort { Output.line(String(server.address.port)) }
        printError("hark: Wyoming services \(services.offered.joined(separator: ", ")) of \(setup.workspace.name) at \(server.address)"
            + (devicesNote(setup)) + "; in Home Assistant add the Wyoming Protocol integration with host \(server.address.host) and port \(server.address.port).")

        let stop = DispatchSemaphore(value: 0)
        let sources = [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { stop.signal() }
            source.resume()
            return source
        }
        stop.wait()
        for source in sources { source.cancel() }
        server.stop()
        return 0
    }

    /// The `wanted` services of the appliance `setup` describes, handled turns run by `turns` (the loop's own
    /// inside `hark run`). Builds every recogniser and a wake spotter now, so a workspace or model
    /// they cannot use fails at start-up (65), not at the first request.
    static func services(_ wanted: [String], of setup: ApplianceParts, turns: TurnRunner, limits: WyomingLimits) throws -> WyomingServices {
        let configuration = setup.configuration
        let workspace = setup.workspace
        let model = setup.speechModel
        var asr: WyomingServices.ASR?
        if wanted.contains("asr") {
            let recognizers = ResourcePool<SpeechRecognizer>(capacity: limits.recognizers) {
                try SpeechCLI.recognizer(workspace: workspace, model: model, options: RecognitionOptions())
            }
            // All of them now: no client waits for one to be built (1–3 s for a large grammar).
            var made: [SpeechRecognizer] = []
            while made.count < limits.recognizers, let recognizer = try recognizers.borrow(waitingUpTo: 0) { made.append(recognizer) }
            for recognizer in made { recognizers.release(recognizer) }
            asr = WyomingServices.ASR(model: workspace.name, recognizers: recognizers, acousticThreshold: configuration.acousticThreshold,
                                      understanding: turns.speechUnderstanding)
        }
        var tts: WyomingServices.TTS?
        if wanted.contains("tts") {
            let voices: [ESpeakVoice]
            do { voices = try SpeechSynthesizer.availableVoices() } catch { throw CommandFailure(message: "eSpeak NG: \(error)", exitCode: 69) }
            tts = WyomingServices.TTS(synthesizer: try setup.synthesizer(), voices: voices)
        }
        var wake: WyomingServices.Wake?
        if wanted.contains("wake") {
            let settingsPath = configuration.wakeSettings.map { configuration.resolve($0) }
            let spotters = ResourcePool<WakePhraseSpotter>(capacity: limits.wakeSpotters) {
                try SpeechCLI.wakeSpotter(settingsPath: settingsPath, model: model)
            }
            guard let first = try spotters.borrow(waitingUpTo: 0) else { throw CommandFailure(message: "no wake-phrase spotter") }
            wake = WyomingServices.Wake(phrase: first.phrase, spotters: spotters)
            spotters.release(first)
        }
        let intent = wanted.contains("intent")
            ? WyomingServices.Intent(model: workspace.name, matcher: setup.assistant.matcher, threshold: configuration.intentThreshold) : nil
        let handle = wanted.contains("handle") ? WyomingServices.Handle(model: workspace.name, turns: turns) : nil
        return WyomingServices(asr: asr, tts: tts, wake: wake, intent: intent, handle: handle, version: version)
    }

    /// The server for `services` at `address`; a port it cannot take is exit 69, named by `flag`.
    static func start(_ services: WyomingServices, at address: WyomingAddress, limits: WyomingLimits, flag: String) throws -> WyomingServer {
        do {
            return try WyomingServer(address: address, services: services, limits: limits) { printError($0) }
        } catch {
            throw CommandFailure(message: "\(flag) \(error.message)", exitCode: 69)
        }
    }

    /// Inside `hark run`, when the configuration's `wyoming` names an address: every service, the dialog on the
    /// loop's own turn runner (so HA's turns and the microphone's share one log and one set of devices). A bad
    /// address is a data error (65).
    static func startInside(_ setup: ApplianceParts, turns: TurnRunner) throws -> WyomingServer? {
        guard let uri = setup.configuration.wyoming else { return nil }
        let address: WyomingAddress
        do { address = try WyomingAddress(uri: uri) } catch {
            throw CommandFailure(message: "\(setup.configuration.source?.path ?? "configuration"): wyoming: \(error.message)", exitCode: 65)
        }
        let limits = WyomingLimits()
        let services = try services(allServices, of: setup, turns: turns, limits: limits)
        let server = try start(services, at: address, limits: limits, flag: "wyoming:")
        printError("hark: Wyoming services for Home Assistant at \(server.address) (docs/wyoming.md)")
        return server
    }

    /// "; simulated LED and camera" when the dialog's actions run on simulated devices.
    static func devicesNote(_ setup: ApplianceParts) -> String {
        setup.devices.simulated.isEmpty ? "" : "; simulated \(RunCommand.listed(setup.devices.simulated.map { $0 == "led" ? "LED" : $0 }, "and"))"
    }
}
