import Foundation
import HarkAudio
import HarkCore
import HarkHTTP
import HarkRooms
import Synchronization
import Testing
@testable import HarkServer

/// An appliance in another appliance's rooms (`RemoteRoomMember`, docs/rooms.md "Another appliance's rooms")
/// against a real companion server over loopback: joining by name (kind appliance), audio both ways, a server
/// that restarts (the member gets back in), and leaving.
@Suite("Remote room member", .serialized)
struct RemoteRoomMemberTests {
    final class Reports: Sendable {
        let lines = Mutex<[String]>([])
        func add(_ line: String, _ error: Bool) { lines.withLock { $0.append((error ? "error: " : "") + line) } }
        var all: [String] { lines.withLock { $0 } }
    }

    static func start(_ bench: RoomsBench, port: Int = 0) throws -> (HTTPServer, Rooms, CompanionAPI) {
        let rooms = try bench.openRooms()
        let api = CompanionAPI(turns: bench.turns, auth: bench.auth, pictures: nil, listening: nil, speak: nil, openAPI: Array("{}".utf8), rooms: rooms)
        let server = try HTTPServer(configuration: ServerConfiguration(port: port), router: api.router(staticFiles: nil))
        server.start()
        return (server, rooms, api)
    }

    /// `seconds` of the microphone in 100 ms blocks, the way the voice loop hands them over (a tone, so the
    /// server hears a speaking member).
    static func talk(_ member: RemoteRoomMember, seconds: Double) -> [Int16] {
        var heard: [Int16] = []
        let block = RoomAudio.sampleRate / 10
        for b in 0..<Int(seconds * 10) {
            let samples = (0..<block).map { i in Int16(6000 * sin(Double(b * block + i) * 2 * .pi * 440 / Double(RoomAudio.sampleRate))) }
            heard += member.exchange(microphone: PCMBuffer(format: PCMFormat(sampleRate: RoomAudio.sampleRate, channels: 1), samples: samples)).mix.samples
        }
        return heard
    }

    static func wait(_ seconds: Double, until condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition() { return true }
            Thread.sleep(forTimeInterval: 0.1)
        }
        return condition()
    }

    @Test func joinsTalksRejoinsAfterARestartAndLeaves() throws {
        let bench = try RoomsBench()
        var (server, rooms, api) = try Self.start(bench)
        let port = server.port
        let reports = Reports()
        let link = RoomsLink(server: "http://127.0.0.1:\(port)", token: try bench.deviceToken(), certificateSHA256: nil)
        let member = try RemoteRoomMember(link: link, name: "Office", echoCancellation: false, report: reports.add)

        #expect(member.join(named: "attic", said: nil, text: nil).status == .noRoom)
        let made = member.joinOrCreate(displayName: "Kitchen")
        #expect(made.status == .joined, "\(made.message)")
        let room = try #require(made.roomID)
        #expect(member.joinOrCreate(displayName: "kitchen").status == .already)
        #expect(member.currentRoom?.name == "Kitchen")
        let listed = try rooms.members(of: room)
        #expect(listed.map(\.name) == ["Office"] && listed.first?.kind == .appliance && listed.first?.state == .joined)

        // Its microphone reaches the room: frames received and mixed, the member marked speaking.
        let played = Self.talk(member, seconds: 1.5)
        let received = try #require(api.roomAudio).statistics.framesReceived
        #expect(received >= 60, "the server received \(received) frames of 75")
        // Alone in the room it hears silence (mix-minus), at the microphone's pace.
        #expect(played.count >= RoomAudio.sampleRate && played.allSatisfy { abs($0) < 50 }, "\(played.count) samples")

        // The server restarts on the same port: the member reports the loss and gets back in within ~5 s.
        server.stop()
        #expect(Self.wait(5) { member.currentRoom == nil })
        (server, rooms, api) = try Self.start(bench, port: port)
        defer { server.stop() }
        let back = Self.wait(15) { member.currentRoom?.id == room }
        #expect(back, "not back in the room; reports: \(reports.all)")
        #expect(reports.all.contains { $0.hasPrefix("error: lost the room Kitchen") }, "\(reports.all)")
        #expect(reports.all.contains { $0.hasPrefix("back in Kitchen") }, "\(reports.all)")
        _ = Self.talk(member, seconds: 0.5)
        #expect(try #require(api.roomAudio).statistics.framesReceived >= 20)

        // Leaving is leaving for good: no rejoin.
        #expect(member.leave().status == .left)
        #expect(member.leave().status == .notInRoom)
        Thread.sleep(forTimeInterval: 1)
        #expect(try rooms.members(of: room).first?.state == .left)
        #expect(member.currentRoom == nil)
    }

    /// A spoken announcement goes to the other server as its recording (`POST /api/announce`'s `audio`), which
    /// plays those very samples; a typed one is text, for a speaker that only plays here, so nobody would hear it.
    @Test func anAnnouncementTakesItsRecordingToTheOtherServer() throws {
        let bench = try RoomsBench()
        let rooms = try bench.openRooms()
        let played = Mutex<[[Int16]]>([])
        let api = CompanionAPI(turns: bench.turns, auth: bench.auth, pictures: nil, listening: nil, speak: nil, openAPI: Array("{}".utf8),
                               rooms: rooms, play: { samples in
                                   played.withLock { $0.append(samples) }
                                   return true
                               })
        let server = try HTTPServer(configuration: ServerConfiguration(port: 0), router: api.router(staticFiles: nil))
        server.start()
        defer { server.stop() }
        let link = RoomsLink(server: "http://127.0.0.1:\(server.port)", token: try bench.deviceToken(), certificateSHA256: nil)
        let member = try RemoteRoomMember(link: link, name: "Office", echoCancellation: false, report: { _, _ in })
        let voice = (0..<8_000).map { Int16(truncatingIfNeeded: $0 * 37 - 20_000) }  // 0.5 s, every bit pattern of the bytes used
        let outcome = member.announce("the car is here", voice: voice)
        #expect(outcome.status == .announced, "\(outcome.message)")
        #expect(played.withLock { $0 } == [voice])
        let typed = member.announce("the car is here")
        #expect(typed.status == .nobodyListening, "\(typed.message)")
        #expect(played.withLock { $0.count } == 1)
        let tooShort = member.announce("hi", voice: Array(voice.prefix(1_000)))
        #expect(tooShort.status == .failed && tooShort.message.contains("\"audio\""), "\(tooShort.message)")
    }

    @Test func roomsJoinWaitsForAServerThatIsNotUpYet() throws {
        let bench = try RoomsBench()
        // A port that was free a moment ago: the server is "still booting".
        let (probe, _, _) = try Self.start(bench)
        let port = probe.port
        probe.stop()
        let reports = Reports()
        let link = RoomsLink(server: "http://127.0.0.1:\(port)", token: try bench.deviceToken(), certificateSHA256: nil)
        let member = try RemoteRoomMember(link: link, name: "Office", echoCancellation: false, report: reports.add)
        let first = member.joinOrCreateWhenReachable(displayName: "Kitchen")
        #expect(first.status == .failed && first.message.contains("trying again every 5 s"), "\(first.message)")
        let (server, rooms, _) = try Self.start(bench, port: port)
        defer { server.stop() }
        #expect(Self.wait(12) { member.currentRoom?.name == "Kitchen" }, "reports: \(reports.all)")
        #expect(try rooms.openRooms().map(\.displayName) == ["Kitchen"])
        #expect(reports.all.contains { $0.contains("joined Kitchen") && $0.hasSuffix("(rooms.join)") }, "\(reports.all)")
        _ = member.leave()
    }

    @Test func aRefusalNamesTheServerAndTheReason() throws {
        let bench = try RoomsBench()
        let (server, _, _) = try Self.start(bench)
        defer { server.stop() }
        let reports = Reports()
        let revoked = RoomsLink(server: "http://127.0.0.1:\(server.port)", token: "not-a-token", certificateSHA256: nil)
        let member = try RemoteRoomMember(link: revoked, name: "Office", report: reports.add)
        let outcome = member.joinOrCreate(displayName: "Kitchen")
        #expect(outcome.status == .failed)
        #expect(outcome.message.contains("POST /auth on http://127.0.0.1:\(server.port)") && outcome.message.contains("(401)"), "\(outcome.message)")
        let nobody = try RemoteRoomMember(link: RoomsLink(server: "http://127.0.0.1:9", token: "x", certificateSHA256: nil), name: "Office", report: reports.add)
        #expect(nobody.join(named: "Kitchen", said: nil, text: nil).message.contains("cannot connect to http://127.0.0.1:9"))
    }
}
