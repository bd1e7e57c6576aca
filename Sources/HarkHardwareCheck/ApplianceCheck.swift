import Foundation
import HarkAppliance
import HarkAudio
import HarkCore
import HarkDevices
import HarkSpeech

/// The whole appliance on real drivers: `Appliance` with `DeviceSet.open` on the gpio-sim chip (light, LED,
/// button), its microphone on the loopback's capture side, the vivid camera, replies on a second loopback
/// substream. A driver thread speaks into the loopback and works the button through sysfs, as a person would.
enum ApplianceCheck {
    static let check = HardwareCheck(
        name: "appliance.loop",
        summary: "Appliance on real drivers: spoken \"turn on the light\" → LIGHT high; button + \"turn off the light\" → low; \"take a picture\" → a vivid JPEG",
        run: run)

    /// The configuration a deployment on this "board" would write (deploy/hark.json's fields).
    static func configuration(_ context: CheckContext, camera: String, data: URL) throws(ConfigurationError) -> ApplianceConfiguration {
        let text = """
            // The lane's appliance: every device real, nothing simulated (a missing one fails the check).
            {
              "workspace": "\(context.workspace.source ?? "")",
              "data_directory": "\(data.path)",
              "simulate": false,
              "audio": { "capture": "\(CheckContext.loopbackCapture)", "playback": "\(CheckContext.loopbackReplies)",
                         "trailing_silence": 0.8, "listen_timeout": 10, "earcon": true },
              "wake": { "enabled": false },
              "gpio": {
                "chip": "\(context.simulator.chip)",
                "outputs": { "light": { "line": "LIGHT" }, "led": { "line": "LED" } },
                "button": { "line": "BUTTON", "active_low": true, "debounce_ms": 30, "mode": "hold" }
              },
              "camera": { "device": "\(camera)", "width": 640, "height": 480 }
            }
            """
        return try ApplianceConfiguration.parse(text, source: nil)
    }

    /// What the driver thread saw, handed back to the check on the main thread.
    final class Outcome: @unchecked Sendable {
        // @unchecked: written by the driver thread before it posts `.stop`, read after `run` returns.
        var failure: String?
        var steps: [String] = []
        /// What the person said, when, and the gaps its own playback had (its underruns).
        var utterances: [Utterance] = []
        var voiceUnderruns: [ALSAXrun] = []
    }

    static func run(_ context: CheckContext) throws -> String {
        let sim = context.simulator
        // Released: the button's pull-up.
        try sim.pull("BUTTON", up: true)
        let data = URL(fileURLWithPath: "/tmp/hwcheck-appliance-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: data) }
        let c = try configuration(context, camera: try CameraChecks.vivid().path, data: data)
        // The same parts `hark run` and `hark serve` build from a configuration.
        let parts = try ApplianceParts(configuration: c, workspace: context.workspace, dataDirectory: data)
        try expect(parts.devices.simulated.isEmpty, "DeviceSet simulated \(parts.devices.simulated) with simulate = false")
        let store = parts.store
        let pictures = parts.pictures
        // Without the judge against any English (RecognitionOptions.anyEnglish): these checks are about the devices,
        // and the VM carries the model without its 26 MB general language model.
        let recognizer = try SpeechRecognizer(
            workspace: context.workspace, options: RecognitionOptions(anyEnglish: nil),
            pronunciations: try CustomThenESpeak(customDictionary: context.pronunciations))
        // Unlike `hark run` (a 0.1 s buffer the loop reads itself): a 0.5 s buffer read by a thread that does
        // nothing else, into a queue the loop reads. Under TCG the loop decodes 0.1 s of speech in more than
        // 0.1 s and snd-aloop copies audio in bursts when the guest's timer runs late, so a 0.1 s buffer read
        // between decodes can overrun mid-sentence and the recogniser hears speech with holes in it
        // (docs/hardware-testing.md, "Audio under emulation").
        let device = try ALSACapture(device: c.captureDevice, format: .speech, latency: 0.5)
        let microphone = CaptureThread(device, blockFrames: 800)
        microphone.start()
        defer { microphone.stop() }
        let speaker = try ALSAPlayback(device: c.playbackDevice, format: SpeechSynthesizer.playbackFormat)
        let log = EventLog(echo: true)
        let runner = parts.turns(seed: 6) { event, _ in log.append(event) }
        let appliance = try Appliance(
            configuration: c, turns: runner, recognizer: recognizer, wake: nil, synthesizer: try parts.makeSynthesizer(), speaker: speaker)

        let outcome = Outcome()
        let triggers = appliance.triggers
        let driver = Thread {
            do {
                try drive(sim: sim, log: log, microphone: microphone, outcome: outcome)
            } catch {
                outcome.failure = "\(error)"
            }
            triggers.post(.stop)
        }
        driver.name = "hwcheck person"
        driver.start()
        let status = appliance.run(audio: microphone, mode: .everySpeech, exitWhenInputEnds: false)
        microphone.stop()

        let audio = audioReport(microphone: device, queue: microphone, speaker: speaker, replies: log.texts(.reply).count, outcome: outcome)
        if let failure = outcome.failure {
            throw CheckFailure(failure + "; audio: \(audio) (after: \(outcome.steps.joined(separator: "; ")))")
        }
        let heard = log.all.filter { $0.kind == .transcript }.compactMap { $0.data["acoustic_confidence"]?.doubleValue }
        outcome.steps.append("acoustic " + heard.map { String(format: "%.2f", $0) }.joined(separator: "/") + "; audio: \(audio)")
        // Every failure from here on says what the audio path lost as well.
        let require = { (condition: Bool, message: String) throws in try expect(condition, message + "; audio: \(audio)") }
        try require(status == 0, "the loop ended with status \(status): \(log.texts(.error))")
        try require(log.texts(.error).isEmpty, "the loop reported errors: \(log.texts(.error))")
        try require(try sim.value("LED") == false, "the LED is still lit after the loop stopped")
        let turns = try store.events(kinds: [.transcript]).map(\.event.text)
        try require(turns == ["turn on the light", "turn off the light", "take a picture"],
                   "stored transcripts: \(turns) (acoustic \(log.all.filter { $0.kind == .transcript }.map { EventLog.recognition($0) }))")
        let stored = try pictures.list()
        try expect(stored.count == 1, "\(stored.count) pictures stored, expected 1")
        if let picture = stored.first {
            let decoded = try JPEGDecoder().decodeRGB([UInt8](try Data(contentsOf: picture.url)))
            try expect(decoded.width == 640 && decoded.height == 480, "the stored picture decodes to \(decoded.width)×\(decoded.height)")
            outcome.steps.append("\(picture.fileName) \(decoded.width)×\(decoded.height) from \(picture.source)")
        }
        return outcome.steps.joined(separator: "; ")
    }

    /// The person: speaks, presses, waits for the kernel's line to change. Runs on its own thread.
    static func drive(sim: GPIOSimulator, log: EventLog, microphone: CaptureThread, outcome: Outcome) throws {
        let clock = ContinuousClock()
        guard log.wait(upTo: .seconds(10), { $0.kind == .start }) != nil else { throw CheckFailure("the loop did not start") }
        // A buffer that holds a whole sentence: see `say`.
        let mouth = try ALSAPlayback(device: CheckContext.loopbackPlayback, format: .speech, latency: 2.0)
        // eSpeak NG's default en-us voice says "take a picture" with an acoustic confidence near the 0.5
        // threshold (0.46–0.49 from a file, 0.11 once through the emulated loopback in CI: rightly rejected);
        // the m1 variant is heard at 0.79–0.99 for all three commands.
        let voice = try SpeechSynthesizer(voice: "en-us+m1")
        defer { outcome.voiceUnderruns = mouth.underruns }

        /// The sentence is synthesised whole, then written at once into a playback buffer that holds all of
        /// it, and drained: nothing the person says depends on when the guest schedules this thread, so it
        /// cannot under-run mid-word (as streaming eSpeak's 60 ms chunks into a 0.2 s buffer can under TCG).
        /// 0.8 s of silence follows, longer than the microphone's 0.5 s buffer: at the end of a drain snd-aloop
        /// fills its last timer tick of the capture with what that capture buffer held one buffer earlier (it
        /// clears the tick's start instead of its end), so the sentence must be followed by more silence than
        /// the capture buffer holds, or a piece of it is heard again after it ("turn off the light bulb").
        let trailingSilence = 12_800
        func say(_ text: String) throws -> ContinuousClock.Instant {
            let speech = try voice.synthesize(text).converted(to: .speech)
            let audio = PCMBuffer(format: .speech, samples: speech.samples + [Int16](repeating: 0, count: trailingSilence))
            try expect(audio.frameCount <= mouth.bufferFrames,
                       "\"\(text)\" is \(milliseconds(audio.frameCount, .speech)), longer than the person's playback buffer (\(milliseconds(mouth.bufferFrames, .speech)))")
            let start = clock.now
            try mouth.write(audio)
            try mouth.drain()
            let end = clock.now
            outcome.utterances.append(Utterance(text: text, start: start, end: end))
            return end
        }
        func awaitLight(_ on: Bool, since spoken: ContinuousClock.Instant, after mark: Int, _ what: String) throws {
            guard try wait(upTo: .seconds(90), for: { try sim.value("LIGHT") == on || rejected(log, after: mark) != nil }) else {
                throw CheckFailure("\(what): LIGHT still \(on ? "low" : "high") 90 s after the sentence ended (transcripts: \(log.texts(.transcript)))")
            }
            if try sim.value("LIGHT") != on, let why = rejected(log, after: mark) { throw CheckFailure("\(what): \(why)") }
            outcome.steps.append("\(what) → LIGHT \(on ? "high" : "low") \(format(clock.now - spoken)) s after the sentence ended")
        }
        /// A turn is over once its reply has been spoken: the loop is reading the microphone again.
        func awaitReply(after mark: Int, _ what: String) throws {
            guard log.wait(after: mark, upTo: .seconds(90), { $0.kind == .reply }) != nil else {
                throw CheckFailure("\(what): no reply within 90 s")
            }
            Thread.sleep(forTimeInterval: 2.5)
        }

        Thread.sleep(forTimeInterval: 0.5)
        var mark = log.count
        try awaitLight(true, since: try say("turn on the light"), after: mark, "spoken \"turn on the light\"")
        try awaitReply(after: mark, "turn on")

        // Hold the button (pulled to ground), speak, let go.
        mark = log.count
        try sim.pull("BUTTON", up: false)
        guard log.wait(after: mark, upTo: .seconds(10), { $0.kind == .listening && $0.data["cause"]?.stringValue == "button" }) != nil else {
            throw CheckFailure("pressing BUTTON did not start listening within 10 s")
        }
        let spoken = try say("turn off the light")
        // Let go 0.3 s after the loop has heard the sentence end: under TCG its reading can lag the microphone
        // (the queue holds what it has not read yet), and a release handled sooner would cut the sentence.
        let heard = microphone.capturedFrames - trailingSilence
        guard wait(upTo: .seconds(30), for: { microphone.consumedFrames >= heard }) else {
            throw CheckFailure("the loop had not read the sentence 30 s after it was said (\(microphone.queuedFrames) frames queued)")
        }
        Thread.sleep(forTimeInterval: 0.3)
        try sim.pull("BUTTON", up: true)
        try awaitLight(false, since: spoken, after: mark, "button held + \"turn off the light\"")
        try awaitReply(after: mark, "turn off")

        mark = log.count
        let asked = try say("take a picture")
        guard let picture = log.wait(after: mark, upTo: .seconds(90), { $0.kind == .picture || isRejection($0) }) else {
            throw CheckFailure("\"take a picture\": no picture event within 90 s (transcripts: \(log.texts(.transcript)))")
        }
        if picture.kind != .picture, let why = rejected(log, after: mark) { throw CheckFailure("\"take a picture\": \(why)") }
        outcome.steps.append("spoken \"take a picture\" → \"\(picture.text)\" \(format(clock.now - asked)) s after the sentence ended")
        try awaitReply(after: mark, "take a picture")
    }

    static func isRejection(_ event: ApplianceEvent) -> Bool {
        event.kind == .intent && event.data["accepted"]?.boolValue == false
    }

    /// The first turn after `mark` the appliance did not accept, in words: what it heard, how sure the
    /// recogniser was and why it refused ("heard "take a pitcher" (1.9 s of audio) at acoustic 0.39: not
    /// understood (acoustic confidence 0.39 < 0.50)"); nil while there is none.
    static func rejected(_ log: EventLog, after mark: Int) -> String? {
        let events = log.all.dropFirst(mark)
        guard let refusal = events.first(where: isRejection) else { return nil }
        let heard = events.last { $0.kind == .transcript && $0.turn == refusal.turn }
        let acoustic = heard?.data["acoustic_confidence"]?.doubleValue.map { String(format: "%.2f", $0) } ?? "?"
        let seconds = heard?.data["audio_seconds"]?.doubleValue.map { String(format: "%.1f s of audio", $0) } ?? "no audio"
        return "heard \"\(heard?.text ?? "")\" (\(seconds)) at acoustic \(acoustic): \(refusal.text)"
    }

    /// Where audio went missing: the microphone's overruns (placed against the person's sentences), the
    /// person's own playback gaps, and the replies' speaker.
    static func audioReport(microphone: ALSACapture, queue: CaptureThread, speaker: ALSAPlayback, replies: Int, outcome: Outcome) -> String {
        let heard = AudioLoss.describe(microphone.overruns, "overrun", during: outcome.utterances)
        let said = AudioLoss.describe(outcome.voiceUnderruns, "underrun", lost: "of gaps", during: outcome.utterances)
        let lost = !microphone.overruns.isEmpty || !outcome.voiceUnderruns.isEmpty || queue.droppedFrames > 0
        let format = microphone.format
        return "microphone \(microphone.device) (buffer \(milliseconds(microphone.bufferFrames, format))): \(heard); "
            + "capture queue: loop at most \(milliseconds(queue.deepestQueue, format)) behind, \(milliseconds(queue.droppedFrames, format)) dropped"
            + "\(queue.realtimeScheduling ? "" : " (no real-time priority)"); "
            + "person's voice \(CheckContext.loopbackPlayback): \(said); "
            + "replies \(speaker.device): \(speaker.underrunCount) underruns after \(replies) replies (not drained, each reply ends in one); "
            + (lost ? "audio was LOST" : "no audio lost")
    }

    static func milliseconds(_ frames: Int, _ format: PCMFormat) -> String {
        "\(frames * 1_000 / max(1, format.sampleRate)) ms"
    }

    static func format(_ d: Duration) -> String {
        String(format: "%.1f", d.timeInterval)
    }
}
