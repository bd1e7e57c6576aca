import Foundation
import HarkHTTPTestSupport
import HarkRooms
import Synchronization
import Testing
@testable import HarkServer
import HarkTestSupport

/// `Rooms` called directly, as the audio path will call it: speaking and level events, their rate, and the
/// memory-only lookups.
@Suite("Rooms")
struct RoomsTests {
    final class Heard: Sendable {
        let events = Mutex<[RoomEvent]>([])
        var kinds: [String] { events.withLock { $0.map(\.kind.rawValue) } }
        func take() -> [RoomEvent] { events.withLock { e in defer { e = [] }; return e } }
    }

    static func rooms(_ clock: TestClock) throws -> (Rooms, URL) {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("hark-rooms-\(UUID().uuidString)/rooms.sqlite3")
        return (try Rooms(database: file, idleClose: .seconds(60), applianceName: "Kitchen", now: { clock.now }), file)
    }

    @Test("a member's level goes out at most 10 times a second; speaking on and off as they change")
    func levelRate() throws {
        let clock = TestClock()
        let (rooms, file) = try Self.rooms(clock)
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        let ada = try rooms.setName("Ada", person: nil, device: "device:a")
        let room = try rooms.create(displayName: "Porch", creator: ada).id
        try rooms.join(room: room, member: ada)
        let heard = Heard()
        let subscription = rooms.subscribe(member: ada) { event in heard.events.withLock { $0.append(event) } }
        defer { rooms.unsubscribe(subscription) }

        // One second of 20 ms blocks, speaking from the 10th block to the 30th.
        var levels = 0
        for block in 0..<50 {
            let sent = rooms.reportAudio(room: room, member: ada, level: Double(block) / 50, speaking: (10..<30).contains(block))
            levels += sent.filter { $0.kind == .level }.count
            clock.advance(0.020)
        }
        #expect(levels == 10)
        let events = heard.take()
        #expect(events.filter { $0.kind == .level }.count == 10)
        #expect(events.filter { $0.kind != .level }.map(\.kind) == [.speakingOn, .speakingOff])
        let levelTimes = events.filter { $0.kind == .level }.map(\.time)
        for (a, b) in zip(levelTimes, levelTimes.dropFirst()) { #expect(b.timeIntervalSince(a) >= 0.0995) }
        // Out-of-range levels are clamped.
        clock.advance(1)
        #expect(rooms.reportAudio(room: room, member: ada, level: 7, speaking: false).first?.level == 1)
    }

    @Test("reports for members who are not joined send nothing; the appliance can be a member")
    func notJoined() throws {
        let clock = TestClock()
        let (rooms, file) = try Self.rooms(clock)
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        let ada = try rooms.setName("Ada", person: nil, device: "device:a")
        let room = try rooms.create(displayName: "Porch", creator: ada).id
        #expect(rooms.reportAudio(room: room, member: ada, level: 0.5, speaking: true).isEmpty)
        #expect(rooms.reportAudio(room: "nope", member: ada, level: 0.5, speaking: true).isEmpty)
        try rooms.invite(room: room, member: Rooms.applianceID)
        #expect(!rooms.isJoined(Rooms.applianceID, in: room))
        let member = try rooms.join(room: room, member: Rooms.applianceID)
        #expect(member.kind == .appliance && member.name == "Kitchen" && member.state == .joined)
        #expect(rooms.joinedMembers(of: room) == [Rooms.applianceID])
        #expect(rooms.reportAudio(room: room, member: Rooms.applianceID, level: 0.2, speaking: true).map(\.kind) == [.speakingOn, .level])
        #expect(try rooms.members(of: room).first?.speaking == true)
        // A stranger (no name picked) cannot be put in a room.
        #expect(throws: RoomsError.self) { try rooms.join(room: room, member: "0123456789abcdef") }
    }

    @Test("membership lookups are safe while members come and go on other threads")
    func concurrentLookups() throws {
        let clock = TestClock()
        let (rooms, file) = try Self.rooms(clock)
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        let people = try (0..<8).map { try rooms.setName("P\($0)", person: nil, device: "device:\($0)") }
        let room = try rooms.create(displayName: "Hall", creator: people[0]).id
        let failures = Mutex(0)
        DispatchQueue.concurrentPerform(iterations: 8) { i in
            for _ in 0..<20 {
                do {
                    try rooms.join(room: room, member: people[i])
                    if !rooms.isJoined(people[i], in: room) { failures.withLock { $0 += 1 } }
                    _ = rooms.reportAudio(room: room, member: people[i], level: 0.3, speaking: true)
                    try rooms.leave(room: room, member: people[i])
                } catch {
                    failures.withLock { $0 += 1 }
                }
            }
        }
        #expect(failures.withLock { $0 } == 0)
        #expect(rooms.joinedMembers(of: room).isEmpty)
        #expect(try rooms.members(of: room).allSatisfy { $0.state == .left && !$0.speaking })
    }

    @Test("picking the same name again on a device is the same person; names and open rooms are bounded")
    func limits() throws {
        let clock = TestClock()
        let (rooms, file) = try Self.rooms(clock)
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        let ada = try rooms.setName("Ada", person: nil, device: "device:a")
        #expect(try rooms.setName(" Ada ", person: nil, device: "device:a") == ada)
        #expect(try rooms.setName("Ada", person: nil, device: "device:b") != ada)
        for i in 1..<Rooms.maximumPeoplePerDevice { _ = try rooms.setName("P\(i)", person: nil, device: "device:a") }
        #expect(throws: RoomsError(.conflict, "this device already has 32 names, the most it may have")) {
            try rooms.setName("One more", person: nil, device: "device:a")
        }
        #expect(try rooms.setName("P1", person: nil, device: "device:a") != ada, "an existing name still works")

        for i in 0..<Rooms.maximumOpenRoomsPerCreator { _ = try rooms.create(displayName: "R\(i)", creator: ada) }
        let refused = caught(RoomsError.self) { try rooms.create(displayName: "One more", creator: ada) }
        #expect(refused?.status == 409)
        // Closed rooms do not count.
        clock.advance(61)
        #expect(try rooms.create(displayName: "After", creator: ada).isOpen)
    }
}
