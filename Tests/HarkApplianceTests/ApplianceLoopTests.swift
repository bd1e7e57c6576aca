import Foundation
import HarkAudio
import HarkCore
import HarkDevices
import HarkSpeech
import HarkTestSupport
import Synchronization
import Testing
@testable import HarkAppliance

/// The whole loop, headless: real speech (eSpeak NG and flite from their command-line tools) → endpointer →
/// PocketSphinx → matcher → dialog → actions on a simulated chip and camera → eSpeak NG reply → event store.
@Suite("Appliance loop", .serialized)
struct ApplianceLoopTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The events the appliance reported, from whichever thread reported them.
    final class Notes: @unchecked Sendable {
        // @unchecked: `seen` is only touched with `lock` held.
        private let lock = NSLock()
        private var seen: [ApplianceEvent] = []
        /// Signalled on every `listening` event (the button test waits for it before speaking).
        let listening = DispatchSemaphore(value: 0)

        func note(_ event: ApplianceEvent) {
            lock.lock()
            seen.append(event)
            lock.unlock()
            if event.kind == .listening { listening.signal() }
        }

        var events: [ApplianceEvent] {
            lock.lock()
            defer { lock.unlock() }
            return seen
        }
    }

    /// A bench appliance: light on line 0, LED on line 1, button on line 2 (active low), a 320×240 camera.
    final class Bench: @unchecked Sendable {
        // @unchecked: read by the test's threads only after the appliance has written (the loop thread joins first).
        let chip = SimulatedGPIOChip(name: "simulated", lines: ["LIGHT", "LED", "BUTTON"])
        let directory: URL
        let store: EventStore
        let pictures: PictureStore
        let speaker = RecordingSink(format: PCMFormat(sampleRate: 22_050, channels: 1))
        let appliance: Appliance
        let notes: Notes
        var listening: DispatchSemaphore { notes.listening }

        init(
            buttonMode: ApplianceConfiguration.ButtonMode = .hold, withRecognizer: Bool = true, workspace: Workspace? = nil,
            wake: (any WakeDetector)? = nil, anyEnglish: Bool = false
        ) throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("hark-loop-\(UUID().uuidString)")
            store = try EventStore(path: directory.appendingPathComponent("events.sqlite3"))
            pictures = try PictureStore(directory: directory.appendingPathComponent("pictures"), limit: 5, events: store)
            var c = ApplianceConfiguration()
            c.simulate = .always
            c.outputs = [
                "light": .init(line: .name("LIGHT"), contextVariable: "light_state"),
                "led": .init(line: .name("LED"), contextVariable: "led_state"),
            ]
            c.button = .init(line: .name("BUTTON"), activeLow: true, debounce: .milliseconds(5), mode: buttonMode)
            // The button's pull-up holds the line high (released) before it is requested.
            try chip.setInput(.name("BUTTON"), physical: true)
            let devices = DeviceSet(
                outputs: [
                    "light": try chip.output(GPIOLineRequest(name: "light", line: .name("LIGHT"))),
                    "led": try chip.output(GPIOLineRequest(name: "led", line: .name("LED"))),
                ],
                button: try chip.input(GPIOLineRequest(name: "button", line: .name("BUTTON"), activeLow: true, debounce: .milliseconds(5))),
                camera: try SimulatedCamera(width: 320, height: 240))
            let workspace = try workspace ?? Workspace.load(from: ApplianceLoopTests.root.appendingPathComponent("Intents/home.json"))
            let recognizer = withRecognizer ? try SpeechRecognizer(
                workspace: workspace, options: RecognitionOptions(anyEnglish: anyEnglish ? .standard : nil),
                pronunciations: try CustomThenESpeak(customDictionary: ApplianceLoopTests.root.appendingPathComponent("Models/pronunciations.dict"))) : nil
            let notes = Notes()
            self.notes = notes
            let recorder = EventRecorder(store: store) { event, _ in notes.note(event) }
            let turns = TurnRunner(
                assistant: try Assistant(workspace: workspace), devices: devices, recorder: recorder, pictures: pictures,
                acousticThreshold: c.acousticThreshold, intentThreshold: c.intentThreshold, seed: 7)
            appliance = try Appliance(
                configuration: c, turns: turns, recognizer: recognizer, wake: wake, synthesizer: try SpeechSynthesizer(), speaker: speaker)
        }

        deinit { try? FileManager.default.removeItem(at: directory) }

        var events: [ApplianceEvent] { notes.events }

        func texts(_ kind: ApplianceEvent.Kind) -> [String] { events.filter { $0.kind == kind }.map(\.text) }

        var light: Bool? { chip.value(of: .name("LIGHT")) }
    }

    /// eSpeak NG's default voice, made in a process of its own (`FreshSpeech`: the same samples in every run).
    static func espeak(_ text: String) throws -> PCMBuffer {
        try FreshSpeech.eSpeak(text)
    }

    /// flite's voice, from its command-line tool (a second synthetic voice, installed by scripts/setup.sh).
    static func flite(_ text: String, voice: String = "slt") throws -> PCMBuffer {
        try FreshSpeech.flite(text, voice: voice)
    }

    static func silence(_ seconds: Double) -> PCMBuffer {
        PCMBuffer(format: .speech, samples: [Int16](repeating: 0, count: Int(seconds * 16_000)))
    }

    static func stream(_ parts: [PCMBuffer]) -> PCMBuffer {
        var all = PCMBuffer(format: .speech)
        for p in parts { all.append(p) }
        return all
    }

    @Test("a near-command whose second reading does not name the grammar's device runs nothing, and the events say why")
    func nearCommandStoppedByTheReadingsValues() throws {
        let bench = try Bench()
        let audio = Self.stream([Self.silence(1), try Self.espeak("switch off the oven"), Self.silence(1.5)])
        #expect(bench.appliance.run(audio: BufferedAudioSource(audio), mode: .everySpeech, exitWhenInputEnds: true) == 0)
        let transcript = try #require(bench.events.first { $0.kind == .transcript })
        #expect(transcript.text.hasPrefix("switch off the"), "the grammar hears the nearest device it knows: \(transcript.text)")
        #expect(transcript.data["values_unread"] == .array([.string("@device:light")]), "\(transcript.data)")
        #expect(transcript.data["accepted"] == .bool(false))
        let reason = try #require(bench.events.first { $0.kind == .intent }?.text)
        #expect(reason.hasPrefix("not understood (the words could also be") && reason.hasSuffix("#OffLight without @device:light)"), "\(reason)")
        #expect(bench.texts(.action).isEmpty, "a wrong \"switch off\" would be a \"light off\" action even with the light off")
    }

    @Test("a spoken \"turn on the light\" drives the light line high, is answered aloud and logged as one turn")
    func lightFromSpeech() throws {
        let bench = try Bench()
        let audio = Self.stream([Self.silence(1), try Self.espeak("turn on the light"), Self.silence(1.5)])
        #expect(bench.light == false)
        let status = bench.appliance.run(audio: BufferedAudioSource(audio), mode: .everySpeech, exitWhenInputEnds: true)
        #expect(status == 0)
        #expect(bench.light == true)
        #expect(bench.texts(.transcript) == ["turn on the light"])
        #expect(bench.texts(.reply) == ["Light is on"])
        #expect(bench.texts(.device) == ["Light is on"])
        #expect(bench.texts(.action) == ["light on"])
        // The reply was spoken: more audio than the earcon alone.
        #expect(bench.speaker.recorded.duration > 0.5)
        // The LED was lit while listening and is off again.
        #expect(bench.chip.value(of: .name("LED")) == false)
        let stored = try bench.store.events()
        let turnIDs = Set(stored.compactMap(\.event.turn))
        #expect(turnIDs.count == 1)
        let turnID = try #require(turnIDs.first)
        let turn = try #require(try bench.store.turn(id: turnID))
        #expect(turn.outcome?.intent == "OnLight")
        #expect(turn.outcome?.accepted == true)
        #expect(turn.outcome?.reply == "Light is on")
        #expect(stored.map(\.event.kind).contains(.stop))
    }

    /// A knock: white noise decaying over about 40 ms, 0.25 s long (no pitch: not a voice).
    static func knock() -> PCMBuffer {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        let samples = (0..<4_000).map { i -> Int16 in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let unit = Double(state >> 11) / Double(1 << 53) * 2 - 1
            return Int16(unit * 8_000 * exp(-Double(i) / 16_000 / 0.04))
        }
        return PCMBuffer(format: .speech, samples: samples)
    }

    @Test("a knock is no turn: it ends as \"Nothing heard\", and the command after it is the next turn")
    func knockIsNoTurn() throws {
        let bench = try Bench()
        let audio = Self.stream([Self.silence(1), Self.knock(), Self.silence(1.5), try Self.espeak("turn on the light"), Self.silence(1.5)])
        _ = bench.appliance.run(audio: BufferedAudioSource(audio), mode: .everySpeech, exitWhenInputEnds: true)
        #expect(bench.texts(.transcript) == ["turn on the light"])
        #expect(bench.light == true)
        let nothing = try #require(bench.events.first { $0.kind == .state && $0.text == "Nothing heard" })
        #expect(nothing.data["reason"] == "noise without a voice")
        // The knock's turn ended before the command's began.
        let kinds = bench.events.map(\.kind)
        let firstTranscript = try #require(kinds.firstIndex(of: .transcript))
        let nothingHeard = try #require(bench.events.firstIndex { $0.text == "Nothing heard" })
        #expect(nothingHeard < firstTranscript)
    }

    @Test("a request the workspace cannot do, heard as a command, switches nothing: any English fits it better")
    func anyEnglishTurnsAwayANearCommand() throws {
        let bench = try Bench(anyEnglish: true)
        // flite kal's "turn on the radio in the garden" fits "turn on the ceiling light" well enough for the acoustic
        // point alone; the general English model hears it far better.
        let audio = Self.stream([Self.silence(1), try Self.flite("turn on the radio in the garden", voice: "kal"), Self.silence(1.5)])
        _ = bench.appliance.run(audio: BufferedAudioSource(audio), mode: .everySpeech, exitWhenInputEnds: true)
        #expect(bench.light == false)
        #expect(bench.texts(.transcript) == ["turn on the ceiling light"])
        let refusal = try #require(bench.events.first { $0.kind == .intent })
        #expect(refusal.text.contains("any English fits better"), "\(refusal.text)")
        let transcript = try #require(bench.events.first { $0.kind == .transcript })
        if case .number(let margin)? = transcript.data["english_margin"] { #expect(margin < -0.5) } else { Issue.record("no english_margin in \(transcript.data)") }
        #expect(bench.texts(.device).isEmpty)
    }

    @Test("a spoken \"take a picture\" stores a valid JPEG and records it")
    func pictureFromSpeech() throws {
        let bench = try Bench()
        let audio = Self.stream([Self.silence(1), try Self.flite("take a picture"), Self.silence(1.5)])
        _ = bench.appliance.run(audio: BufferedAudioSource(audio), mode: .everySpeech, exitWhenInputEnds: true)
        #expect(bench.texts(.picture).count == 1)
        #expect(try bench.store.events(kinds: [.picture]).count == 1)
        let pictures = try bench.pictures.list()
        #expect(pictures.count == 1)
        let picture = try #require(pictures.first)
        let jpeg = try [UInt8](Data(contentsOf: picture.url))
        #expect(jpeg.prefix(2) == [0xFF, 0xD8] && jpeg.suffix(2) == [0xFF, 0xD9])
        #expect(picture.width == 320 && picture.height == 240)
        #expect(picture.trigger == "voice")
        #expect(bench.texts(.reply) == ["Picture taken"])
    }

    @Test("a spoken announcement goes out in the speaker's own voice, not as the workspace sentence it was heard as, judged against any English or not",
          arguments: [false, true])
    func announcementInTheSpeakersVoice(anyEnglish: Bool) throws {
        let bench = try Bench(anyEnglish: anyEnglish)
        let heard = Mutex<[Announcement]>([])
        bench.appliance.turns.roomLink.installAnnouncer { announcement in
            heard.withLock { $0.append(announcement) }
            return RoomOutcome(.announced, message: "announced here")
        }
        // "pizza" is in no example: the grammar hears the nearest sentence ("announce that the car is here").
        let said = try Self.flite("announce that the pizza is here")
        let audio = Self.stream([Self.silence(1), said, Self.silence(1.5)])
        _ = bench.appliance.run(audio: BufferedAudioSource(audio), mode: .everySpeech, exitWhenInputEnds: true)
        let announcement = try #require(heard.withLock { $0.first }, "announced: \(bench.texts(.transcript)) \(bench.texts(.reply))")
        #expect(bench.texts(.reply) == ["Announcing your message."])
        let voice = try #require(announcement.voice)
        // The recording of the words after "announce that": as long as flite's "the pizza is here" (give or take
        // the word edges kept), and found in the utterance after its first words, by the 10 ms energy envelope.
        let message = try Self.flite("the pizza is here")
        let seconds = Double(voice.count) / 16_000
        #expect(seconds > 0.7 * message.duration && seconds < said.duration - 0.4, "\(seconds) s against \(message.duration) s of the message, \(said.duration) s of all")
        func envelope(_ x: [Int16]) -> [Double] {
            stride(from: 0, to: x.count - 160, by: 160).map { i in (x[i..<(i + 160)].reduce(0.0) { $0 + Double($1) * Double($1) } / 160).squareRoot() }
        }
        let whole = envelope(said.samples), part = envelope(voice)
        func mismatch(at offset: Int) -> Double {
            let a = part.map { log(1 + $0) }, b = whole[offset..<(offset + part.count)].map { log(1 + $0) }
            let scale = b.reduce(0, +) / max(a.reduce(0, +), 1e-9)
            return zip(a, b).reduce(0) { $0 + abs($1.0 * scale - $1.1) }
        }
        let best = try #require((0...(whole.count - part.count)).min { mismatch(at: $0) < mismatch(at: $1) })
        #expect(Double(best) / 100 >= 0.5, "the voice starts \(Double(best) / 100) s into the utterance, after \"announce that\"")
    }

    @Test("out-of-domain speech changes nothing: no action, the light stays as it was")
    func outOfDomain() throws {
        let bench = try Bench()
        let audio = Self.stream([Self.silence(1), try Self.espeak("my sister plays the violin in an orchestra"), Self.silence(1.5)])
        _ = bench.appliance.run(audio: BufferedAudioSource(audio), mode: .everySpeech, exitWhenInputEnds: true)
        #expect(bench.texts(.transcript).count == 1)
        #expect(bench.texts(.action).isEmpty)
        #expect(bench.texts(.device).isEmpty)
        #expect(bench.light == false)
        #expect(try bench.pictures.list().isEmpty)
    }

    /// Speech before the press is ignored; after the press it is a turn.
    final class PressingSource: AudioSource {
        let format = PCMFormat.speech
        let before: BufferedAudioSource
        let after: BufferedAudioSource
        let press: () throws -> Void
        let waitForListening: DispatchSemaphore
        var pressed = false
        var heardListening = false
        var waits = 0

        init(before: PCMBuffer, after: PCMBuffer, waitForListening: DispatchSemaphore, press: @escaping () throws -> Void) {
            self.before = BufferedAudioSource(before)
            self.after = BufferedAudioSource(after)
            self.waitForListening = waitForListening
            self.press = press
        }

        func read(maxFrames: Int) throws -> PCMBuffer? {
            if let block = before.read(maxFrames: maxFrames) { return block }
            if !pressed {
                pressed = true
                try press()
            }
            // The button thread posts the press and the loop takes it between blocks: until it has said
            // "listening", the microphone hears 20 ms blocks of silence (at most 5 s of them).
            if !heardListening {
                heardListening = waitForListening.wait(timeout: .now() + .milliseconds(20)) == .success
                waits += 1
                if !heardListening && waits < 250 { return PCMBuffer(format: format, samples: [Int16](repeating: 0, count: 320)) }
            }
            return after.read(maxFrames: maxFrames)
        }
    }

    @Test("a button press starts listening; speech without it is ignored")
    func buttonStartsListening() throws {
        let bench = try Bench(buttonMode: .press)
        let command = try Self.espeak("turn on the light")
        let ignored = Self.stream([Self.silence(0.5), command, Self.silence(1)])
        let heard = Self.stream([Self.silence(0.3), command, Self.silence(1.5)])
        let source = PressingSource(before: ignored, after: heard, waitForListening: bench.listening) {
            try bench.chip.setInput(.name("BUTTON"), physical: false)  // active low: pressed
        }
        _ = bench.appliance.run(audio: source, mode: .triggered, exitWhenInputEnds: true)
        let listening = bench.events.filter { $0.kind == .listening }
        #expect(listening.count == 1)
        #expect(listening.first?.data["cause"] == "button")
        #expect(bench.texts(.transcript) == ["turn on the light"])
        #expect(bench.light == true)
    }

    /// Holds the button before `speech` and, if `release` is set, lets go the moment the speech has been read;
    /// silence follows either way. The release is posted as the button thread would post it, but from here, so
    /// that the loop takes it right after the block it is reading (the button thread could be late).
    final class HoldingSource: AudioSource, @unchecked Sendable {
        let format = PCMFormat.speech
        let speech: BufferedAudioSource
        let tail: BufferedAudioSource
        let setButton: (Bool) throws -> Void
        let letGo: () -> Void
        let waitForListening: DispatchSemaphore
        let release: Bool
        var pressed = false
        var released = false
        var heardListening = false
        var waits = 0

        init(speech: PCMBuffer, tail: PCMBuffer, release: Bool, waitForListening: DispatchSemaphore,
             setButton: @escaping (Bool) throws -> Void, letGo: @escaping () -> Void) {
            self.letGo = letGo
            self.speech = BufferedAudioSource(speech)
            self.tail = BufferedAudioSource(tail)
            self.release = release
            self.waitForListening = waitForListening
            self.setButton = setButton
        }

        func read(maxFrames: Int) throws -> PCMBuffer? {
            if !pressed {
                pressed = true
                try setButton(true)
            }
            if !heardListening {
                heardListening = waitForListening.wait(timeout: .now() + .milliseconds(20)) == .success
                waits += 1
                if !heardListening && waits < 250 { return PCMBuffer(format: format, samples: [Int16](repeating: 0, count: 320)) }
            }
            if let block = speech.read(maxFrames: maxFrames) { return block }
            if release && !released {
                released = true
                letGo()
            }
            return tail.read(maxFrames: maxFrames)
        }
    }

    @Test("a held button let go as the last word ends still gives the decoder silence after it, and ends the turn before the endpointer would")
    func releaseKeepsATail() throws {
        func heardSeconds(release: Bool) throws -> (utterance: Double, decoded: Double) {
            let bench = try Bench(buttonMode: .hold)
            // The synthesiser's own trailing silence is cut: the button goes up as the last sound ends.
            let voice = try Self.espeak("turn on the light")
            let last = voice.samples.lastIndex { abs(Int($0)) > 300 } ?? voice.samples.count - 1
            let speech = Self.stream([Self.silence(0.3), PCMBuffer(format: voice.format, samples: Array(voice.samples[...last]))])
            let source = HoldingSource(
                speech: speech, tail: Self.silence(2), release: release, waitForListening: bench.listening,
                setButton: { down in try bench.chip.setInput(.name("BUTTON"), physical: !down) },  // active low
                letGo: { bench.appliance.triggers.post(.buttonReleased) })
            _ = bench.appliance.run(audio: source, mode: .triggered, exitWhenInputEnds: true)
            #expect(bench.texts(.transcript) == ["turn on the light"])
            #expect(bench.light == true)
            let transcript = bench.events.first { $0.kind == .transcript }
            return (transcript?.data["utterance_seconds"]?.doubleValue ?? 0, transcript?.data["audio_seconds"]?.doubleValue ?? 0)
        }
        let held = try heardSeconds(release: false)  // ends on the endpointer's 0.8 s of silence
        let letGo = try heardSeconds(release: true)
        // The turn ends sooner: the utterance is over 0.4 s after the release, not 0.8 s after the last word.
        #expect(letGo.utterance <= held.utterance - 0.1, "released: \(letGo) s, held: \(held) s")
        // Measured: 0.35 s shorter than held with the tail; cut at the release it was 0.65 s shorter.
        #expect(letGo.utterance >= held.utterance - 0.5, "released: \(letGo) s, held: \(held) s")
        // And the decoder still gets the same 0.3 s of quiet after the last word either way (UtteranceListener).
        #expect(abs(letGo.decoded - held.decoded) < 0.05, "released: \(letGo) s, held: \(held) s")
    }

    @Test("typed turns: the dialog answers \"is the light on\" from the line, not from its memory")
    func typedTurnsReadTheLine() throws {
        let bench = try Bench(withRecognizer: false)
        let triggers = bench.appliance.triggers
        triggers.post(.text("turn on the light", source: .console))
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            _ = bench.appliance.run(audio: nil, mode: .triggered, exitWhenInputEnds: true)
            done.signal()
        }
        thread.start()
        // Wait for the first reply, then switch the light off behind the dialog's back (as the web API would).
        var tries = 0
        while bench.texts(.reply).isEmpty && tries < 500 { Thread.sleep(forTimeInterval: 0.01); tries += 1 }
        try bench.appliance.devices.outputs["light"]?.set(false)
        triggers.post(.text("is the light on?", source: .console))
        triggers.post(.inputClosed(source: .console))
        #expect(done.wait(timeout: .now() + 20) == .success)
        #expect(bench.texts(.reply) == ["Light is on", "The light is off."])
        #expect(bench.appliance.context["light"] == "on")  // the dialog's own memory still says on
    }

    @Test("listening without a microphone is an error event, not a crash")
    func listenWithoutMicrophone() throws {
        let bench = try Bench(withRecognizer: false)
        bench.appliance.triggers.post(.listen(source: .console))
        bench.appliance.triggers.post(.inputClosed(source: .console))
        _ = bench.appliance.run(audio: nil, mode: .triggered, exitWhenInputEnds: true)
        #expect(bench.texts(.error).contains { $0.contains("No microphone") })
    }

    /// A wake detector that hears the phrase in the first block of the stream, and only there.
    final class FirstBlockWake: WakeDetector {
        var fired = false
        var restarts = 0
        func detect(_ buffer: PCMBuffer) throws -> WakeHit? {
            if fired { return nil }
            fired = true
            return WakeHit(phrase: "hey hark", commandAudio: PCMBuffer(format: .speech))
        }
        func restart() throws { restarts += 1 }
    }

    static let timerWorkspace = """
        {"name": "timer", "language": "en", "entities": [], "counterexamples": [],
         "intents": [
           {"intent": "SetTimer", "examples": [{"text": "set a timer"}, {"text": "start a timer"}, {"text": "timer please"}]},
           {"intent": "Duration", "examples": [{"text": "five minutes"}, {"text": "ten minutes"}, {"text": "one hour"}]}],
         "dialog_nodes": [
           {"dialog_node": "timer", "conditions": "#SetTimer", "output": {"text": {"values": ["For how long?"]}}},
           {"dialog_node": "duration", "parent": "timer", "conditions": "#Duration",
            "output": {"text": {"values": ["Timer set for <? input.text ?>."]}}},
           {"dialog_node": "other", "parent": "timer", "previous_sibling": "duration", "conditions": "true",
            "output": {"text": {"values": ["I need a duration."]}}},
           {"dialog_node": "else", "previous_sibling": "timer", "conditions": "anything_else",
            "output": {"text": {"values": ["Sorry."]}}}]}
        """

    @Test("after the wake phrase one command; a question from the dialog listens again without the wake phrase")
    func followUpListening() throws {
        let workspace = try Workspace.parse(Self.timerWorkspace, source: "timer.json")
        let wake = FirstBlockWake()
        let bench = try Bench(workspace: workspace, wake: wake)
        let audio = Self.stream([Self.silence(0.5), try Self.espeak("set a timer"), Self.silence(1.5),
                                 try Self.espeak("five minutes"), Self.silence(1.5)])
        _ = bench.appliance.run(audio: BufferedAudioSource(audio), mode: .wake, exitWhenInputEnds: true)
        #expect(bench.events.filter { $0.kind == .wake }.count == 1)
        #expect(bench.events.filter { $0.kind == .listening }.compactMap { $0.data["cause"]?.stringValue } == ["wake", "follow-up"])
        #expect(bench.texts(.transcript) == ["set a timer", "five minutes"])
        #expect(bench.texts(.reply) == ["For how long?", "Timer set for five minutes."])
        #expect(wake.restarts >= 1, "the spotter starts afresh after a turn, so the reply cannot wake it")
    }
}
