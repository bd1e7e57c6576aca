import Foundation
import HarkAppliance
import HarkAudio
@testable import HarkRooms
import Testing

/// The appliance as a room member, without a server: which room a spoken name means, and the in-process
/// path through the real mixing thread (mix-minus, membership events).
@Suite("Appliance member")
struct ApplianceMemberTests {
    static func room(_ name: String, _ id: String) -> Room {
        Room(id: id, displayName: name, creator: "p", created: Date(), idleSince: nil)
    }

    @Test("a spoken name finds the room by its display name, then within the words said; else none")
    func matching() {
        let rooms = [Self.room("Kitchen", "k"), Self.room("Living Room", "l"), Self.room("Room", "r"), Self.room("Grandma's flat", "g")]
        #expect(ApplianceMember.match("kitchen", text: nil, in: rooms)?.id == "k")
        #expect(ApplianceMember.match("the living room", text: nil, in: rooms)?.id == "l")
        #expect(ApplianceMember.match("", text: "drop in on grandma's flat please", in: rooms)?.id == "g")
        // The longest name said wins: "living room" over "room".
        #expect(ApplianceMember.match("lounge", text: "connect me to the living room", in: rooms)?.id == "l")
        #expect(ApplianceMember.match("garage", text: "drop in on the garage", in: rooms) == nil)
        #expect(ApplianceMember.match("", text: "kit", in: rooms) == nil)
    }

    @Test("joined in process, it hears the others through the mixer, never itself, and leaving is an event")
    func roundTrip() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hark-member-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let rooms = try Rooms(database: directory.appendingPathComponent("rooms.sqlite3"), applianceName: "Kitchen Hark")
        let audio = RoomAudio(rooms: rooms)
        let member = ApplianceMember(audio: audio, echoCancellation: false)
        #expect(audio.appliance === member)
        let ada = try rooms.setName("Ada", person: nil, device: "d")
        let seen = EventLog()
        let subscription = rooms.subscribe(member: ada) { seen.add($0) }
        defer { rooms.unsubscribe(subscription) }

        #expect(member.leave().status == .notInRoom)
        let outcome = try member.joinOrCreate(displayName: "Kitchen")
        #expect(outcome.status == .joined && outcome.room == "Kitchen")
        let room = try #require(outcome.roomID)
        try rooms.join(room: room, member: ada)
        #expect(try rooms.members(of: room).contains { $0.id == Rooms.applianceID && $0.kind == .appliance && $0.name == "Kitchen Hark" })
        #expect(try member.joinOrCreate(displayName: "kitchen").status == .already)

        // A 440 Hz tone in 100 ms blocks, as the voice loop reads the microphone; another member would hear it, the
        // appliance must not: with nobody else talking its own mix stays silent.
        let tone = (0..<1_600).map { Int16(8_000 * sin(2 * Double.pi * 440 * Double($0) / 16_000)) }
        var heard: [Int16] = []
        for _ in 0..<15 {
            heard += member.exchange(microphone: PCMBuffer(format: .speech, samples: tone)).mix.samples
            Thread.sleep(forTimeInterval: 0.1)
        }
        #expect(heard.count > 16_000, "the mixer gave the appliance \(heard.count) samples in 1.5 s")
        #expect(heard.allSatisfy { $0 == 0 }, "the appliance heard itself")
        #expect(try rooms.members(of: room).first { $0.id == Rooms.applianceID }?.speaking == true)

        // A loop that was away for a second (saying a reply) gets only the newest 200 ms, not a second of backlog.
        Thread.sleep(forTimeInterval: 1)
        let after = member.exchange(microphone: PCMBuffer(format: .speech, samples: tone))
        #expect(after.mix.samples.count == EchoPath.playbackAfterBacklog, "\(after.mix.samples.count) samples after a second away")
        #expect(after.microphone.samples.count == tone.count)

        #expect(member.leave().status == .left)
        #expect(member.currentRoom == nil)
        #expect(!rooms.isJoined(Rooms.applianceID, in: room))
        let kinds = seen.events.filter { $0.member?.id == Rooms.applianceID && $0.kind.rawValue.hasPrefix("member:") }.map(\.kind)
        #expect(kinds == [.memberLeft], "Ada joined after the appliance: she sees it leave only (\(kinds))")
    }
}

extension ApplianceMemberTests {
    /// The power of `samples` in dB (relative to 1), for echo return loss.
    static func power(_ samples: ArraySlice<Int16>) -> Double {
        let energy = samples.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(max(1, samples.count))
        return 10 * log10(max(energy, 1e-9))
    }

    /// Ada (an in-process member here, fed white noise: a far end the canceller can learn from) talks; the
    /// appliance's speaker plays her and its microphone hears that again, 30 ms later at half the amplitude.
    /// Returns the echo's power, what the room got from the appliance's microphone and what Ada heard, in the
    /// last 1.5 s of 5 s. The speaker is simulated as an ALSA device behaves: it plays what it was given in order,
    /// 100 ms a block, and silence when it runs dry (so a late start delays what follows) — the assumption the
    /// canceller's far end (what was handed to the speaker, in order) rests on.
    static func echoThroughTheRoom(cancelling: Bool) throws -> (echo: Double, sent: Double, adaHeard: Double) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hark-member-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let rooms = try Rooms(database: directory.appendingPathComponent("rooms.sqlite3"))
        let audio = RoomAudio(rooms: rooms)
        let member = ApplianceMember(audio: audio, echoCancellation: cancelling)
        let ada = try rooms.setName("Ada", person: nil, device: "d")
        let room = try #require(try member.joinOrCreate(displayName: "Kitchen").roomID)
        try rooms.join(room: room, member: ada)
        let adaChannel = audio.attachLocal(room: room, member: ada)
        let adaAudio = try #require(adaChannel.local)
        defer {
            audio.detach(adaChannel)
            _ = member.leave()
        }
        var generator = SystemRandomNumberGenerator()
        var speakerQueue: [Int16] = []
        var sounded: [Int16] = []  // what the speaker played, 100 ms a block
        var echoes: [Int16] = []
        var sent: [Int16] = []
        var adaHeard: [Int16] = []
        let delay = 480  // 30 ms
        // Paced like a capture device: block k is read at 100 ms × k from the start, so a loop made late by a
        // busy machine catches up (as a read from ALSA's buffer returns at once) instead of falling behind the
        // room's clock, which a real speaker and microphone never do.
        let start = Date()
        for step in 0..<50 {
            adaAudio.put((0..<1_600).map { _ in Int16.random(in: -6_000...6_000, using: &generator) })
            // The microphone hears what the speaker sounded meanwhile, 30 ms late and at half the amplitude, over a
            // faint floor.
            let now = sounded.count
            let microphone = (0..<1_600).map { i -> Int16 in
                let position = now - 1_600 + i - delay
                let echo = sounded.indices.contains(position) ? sounded[position] / 2 : 0
                return echo &+ Int16.random(in: -20...20, using: &generator)
            }
            let exchange = member.exchange(microphone: PCMBuffer(format: .speech, samples: microphone))
            // The speaker, like an ALSA device: 100 ms a block from what it was given, silence when it has run dry.
            speakerQueue += exchange.mix.samples
            let block = Array(speakerQueue.prefix(1_600))
            speakerQueue.removeFirst(block.count)
            sounded += block + [Int16](repeating: 0, count: 1_600 - block.count)
            echoes += microphone
            sent += exchange.microphone.samples
            adaHeard += adaAudio.takeOutput()
            Thread.sleep(forTimeInterval: max(0, start.addingTimeInterval(0.1 * Double(step + 1)).timeIntervalSinceNow))
        }
        let tail = 24_000
        return (power(echoes.suffix(tail)), power(sent.suffix(tail)), power(adaHeard.suffix(tail)))
    }

    @Test("the far end does not hear itself: the echo of the room in the appliance's microphone is cancelled")
    func echoIsCancelled() throws {
        let on = try Self.echoThroughTheRoom(cancelling: true)
        let off = try Self.echoThroughTheRoom(cancelling: false)
        func dB(_ x: Double) -> String { String(format: "%.1f dB", x) }
        print("appliance echo: \(dB(on.echo)) in the microphone; to the room \(dB(on.sent)) with the canceller, \(dB(off.sent)) without; Ada hears herself at \(dB(on.adaHeard)), \(dB(off.adaHeard)) without")
        #expect(off.echo - off.sent < 1, "without the canceller the echo goes to the room as it is")
        #expect(on.echo - on.sent >= 15, "echo return loss enhancement \(on.echo - on.sent) dB")
        #expect(off.adaHeard - on.adaHeard >= 15, "Ada heard herself at \(on.adaHeard) dB, \(off.adaHeard) dB without the canceller")
    }
}

final class EventLog: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [RoomEvent] = []
    func add(_ event: RoomEvent) { lock.withLock { stored.append(event) } }
    var events: [RoomEvent] { lock.withLock { stored } }
}
