import Foundation
import HarkAppliance
import HarkAudio
import HarkCore
import HarkDevices
import HarkRooms
import HarkSpeech
import HarkTestSupport
import Testing
@testable import HarkServer

/// The wake phrase in a room member's stream, without sockets: blocks go into the gate as the mixing thread
/// hands them (20 ms, with the mixer's own speaking detector, in real time), and the real worker spots the
/// phrase with the shipped settings, hears the command with the push-to-talk recogniser and runs the turn.
@Suite("Member wake", .serialized)
struct MemberWakeTests {
    /// flite's kal16 voice, 16 kHz (the voice whose "hey hark" said alone the shipped thresholds hear).
    static func speech(_ text: String) throws -> [Int16] {
        try FreshSpeech.flite(text, voice: "kal16").samples
    }

    /// A faint floor (±20 LSB), as a phone's microphone has.
    static func floor(_ seconds: Double, seed: UInt64) -> [Int16] {
        var random = SplitMix64(seed: seed)
        return (0..<Int(seconds * 16_000)).map { _ in Int16(Int(random.next() % 41) - 20) }
    }

    @Test("a member's \"hey hark … turn on the light\" turns the light on, as a turn from the room")
    func wakeAndCommand() throws {
        let workspace = try Workspace.load(from: CompanionAPITests.root.appendingPathComponent("Intents/home.json"))
        let recognizer = try SpeechRecognizer(workspace: workspace, model: SpeechModel(), options: RecognitionOptions(),
                                              pronunciations: try CustomThenESpeak(customDictionary: nil))
        let listening = WebListening(recognizer: recognizer, synthesizer: try SpeechSynthesizer())
        let bench = try CompanionAPITests.Bench(listening: listening)
        let directory = bench.directory.appendingPathComponent("rooms")
        let rooms = try Rooms(database: directory.appendingPathComponent("rooms.sqlite3"), idleClose: .seconds(3600), applianceName: "Kitchen")
        let audio = RoomAudio(rooms: rooms)
        let settings = try WakeSettings.load(from: CompanionAPITests.root.appendingPathComponent("Models/wake.json"))
        let verifier = try settings.verifier.map { try WakeVerifier(contentsOf: CompanionAPITests.root.appendingPathComponent("Models").appendingPathComponent($0)) }
        let gate = MemberWakeGate()
        let wake = try MemberWake(gate: gate, audio: audio, turns: bench.turns, recognizers: listening, listening: MemberWake.Listening()) {
            try WakePhraseSpotter(phrase: settings.phrase, settings: settings, verifier: verifier)
        }
        defer { wake.stop() }

        var stream = Self.floor(0.6, seed: 1) + (try Self.speech("hey hark")) + Self.floor(0.6, seed: 2)
        stream += try Self.speech("turn on the light") + Self.floor(3, seed: 3)
        let quiet = Self.floor(Double(stream.count) / 16_000, seed: 4)
        var ada = VoiceActivity(), ben = VoiceActivity()
        let clock = ContinuousClock()
        var tick = clock.now
        func sleep(until deadline: ContinuousClock.Instant) {
            let left = clock.now.duration(to: deadline)
            if left > .zero { Thread.sleep(forTimeInterval: Double(left.components.attoseconds) * 1e-18 + Double(left.components.seconds)) }
        }
        for start in stride(from: 0, to: stream.count - 319, by: 320) {
            let a = Array(stream[start..<start + 320]), b = Array(quiet[start..<start + 320])
            ada.update(a)
            ben.update(b)
            gate.mixed(room: "r", member: "ada", block: a, speaking: ada.speaking)
            gate.mixed(room: "r", member: "ben", block: b, speaking: ben.speaking)
            gate.endOfTick()
            tick = tick.advanced(by: .milliseconds(20))
            sleep(until: tick)
        }
        var reply: String?
        for _ in 0..<200 where reply == nil {
            Thread.sleep(forTimeInterval: 0.05)
            reply = try bench.store.latestEvents(limit: 50, kinds: [.reply]).last?.event.text
        }
        #expect(reply == "Light is on")
        #expect(try bench.turns.devices.outputs["light"]?.read() == true)
        let turns = try bench.store.turns()
        #expect(turns.map(\.source) == [.room])
        let wakes = try bench.store.latestEvents(limit: 50, kinds: [.wake]).map(\.event)
        #expect(wakes.count == 1 && wakes.first?.data["member"]?.stringValue == "ada" && wakes.first?.data["room"]?.stringValue == "r")
        let s = wake.statistics, g = gate.statistics
        #expect(s.wakes == 1 && s.turns == 1 && s.recognizerBusy == 0 && s.unspottedSeconds == 0)
        // Only Ada spoke: Ben's floor was never spotted, and nothing was dropped.
        #expect(g.droppedBlocks == 0 && g.stretches >= 1 && g.mostWatched == 1)
        #expect(s.spottedSeconds > 1 && s.spottedSeconds < Double(stream.count) / 16_000)
        print("member wake: spotted \(s.spottedSeconds) s of audio in \(s.spottingCPUSeconds) s of CPU")
    }
}
