import Foundation
import HarkCore
import HarkDevices
import Synchronization
import Testing
@testable import HarkAppliance
import HarkTestSupport

/// Pictures asked for at the same time share a capture; each was taken after its request arrived.
@Suite struct CaptureRoundsTests {
    static func picture(_ id: Int64) -> StoredPicture {
        StoredPicture(id: id, time: Date(timeIntervalSince1970: 0), fileName: "\(id).jpg", url: URL(fileURLWithPath: "/nowhere/\(id).jpg"),
                      width: 16, height: 16, bytes: 4, source: "test", trigger: "test", turn: id)
    }

    /// Polls `condition` for up to 5 s.
    static func eventually(_ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(5)
        while !condition() {
            if Date() > deadline { return false }
            Thread.sleep(forTimeInterval: 0.002)
        }
        return true
    }

    @Test func aLoneRequestCapturesAtOnce() throws {
        let rounds = CaptureRounds()
        let calls = Mutex(0)
        for id in 1...3 {
            let share = try rounds.take { () throws(DeviceCommandError) -> StoredPicture in
                calls.withLock { $0 += 1 }
                return Self.picture(Int64(id))
            }
            #expect(share == .took(Self.picture(Int64(id))))
        }
        #expect(calls.withLock { $0 } == 3)
    }

    /// While one capture runs, five more requests arrive: one of them leads the next round, the other four
    /// share its picture, and that capture starts only after all five arrived.
    @Test func requestsDuringACaptureShareTheNextOne() throws {
        let rounds = CaptureRounds()
        let firstMayEnd = DispatchSemaphore(value: 0)
        let started = Mutex<[Int]>([])
        let arrived = Mutex(0)
        let shares = Mutex<[Int: CaptureRounds.Share]>([:])
        let group = DispatchGroup()
        func request(_ id: Int, block: Bool) {
            group.enter()
            Thread.detachNewThread {
                arrived.withLock { $0 += 1 }
                let share = try? rounds.take { () throws(DeviceCommandError) -> StoredPicture in
                    started.withLock { $0.append(id) }
                    if block { firstMayEnd.wait() }
                    // The capture of the second round begins after every request of it arrived.
                    if !block { #expect(arrived.withLock { $0 } == 6) }
                    return Self.picture(Int64(id))
                }
                shares.withLock { $0[id] = share }
                group.leave()
            }
        }
        request(0, block: true)
        try #require(Self.eventually { started.withLock { $0 } == [0] })
        for id in 1...5 { request(id, block: false) }
        try #require(Self.eventually { rounds.waitingRequests == 5 })
        firstMayEnd.signal()
        try #require(group.wait(timeout: .now() + 10) == .success)

        let all = shares.withLock { $0 }
        #expect(all[0] == .took(Self.picture(0)))
        let second = started.withLock { $0 }
        #expect(second.count == 2, "captures: \(second)")
        let leader = try #require(second.last)
        for id in 1...5 {
            #expect(all[id] == (id == leader ? .took(Self.picture(Int64(leader))) : .shared(Self.picture(Int64(leader)))), "request \(id)")
        }
        #expect(rounds.waitingRequests == 0)
    }

    /// A failed capture fails every request of its round, and the next request captures again.
    @Test func aFailedCaptureFailsItsWholeRound() throws {
        let rounds = CaptureRounds()
        let firstMayEnd = DispatchSemaphore(value: 0)
        let results = Mutex<[Result<CaptureRounds.Share, DeviceCommandError>]>([])
        let first = Mutex(true)
        let group = DispatchGroup()
        for _ in 0..<4 {
            group.enter()
            Thread.detachNewThread {
                let result = Result { () throws(DeviceCommandError) -> CaptureRounds.Share in
                    try rounds.take { () throws(DeviceCommandError) -> StoredPicture in
                        if first.withLock({ let was = $0; $0 = false; return was }) {
                            firstMayEnd.wait()
                            return Self.picture(1)
                        }
                        throw .deviceFailed("the camera fell off")
                    }
                }
                results.withLock { $0.append(result) }
                group.leave()
            }
            if first.withLock({ $0 }) { try #require(Self.eventually { !first.withLock { $0 } }) }
        }
        try #require(Self.eventually { rounds.waitingRequests == 3 })
        firstMayEnd.signal()
        try #require(group.wait(timeout: .now() + 10) == .success)
        let all = results.withLock { $0 }
        #expect(all.filter { (try? $0.get()) == .took(Self.picture(1)) }.count == 1)
        #expect(all.filter { if case .failure(.deviceFailed("the camera fell off")) = $0 { true } else { false } }.count == 3)
        #expect(try rounds.take { () throws(DeviceCommandError) -> StoredPicture in Self.picture(9) } == .took(Self.picture(9)))
    }

    /// Through the action dispatcher with the simulated camera at 5 frames a second: six turns asking at once
    /// get fewer pictures than six, every turn has its `picture` event, and each names a stored picture.
    @Test func turnsAskingAtOnceShareStoredPictures() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let data = DataDirectory(url: dir.url)
        let events = try EventStore(path: data.eventStoreURL)
        let pictures = try PictureStore(directory: data.picturesURL, limit: 10, events: events)
        let devices = DeviceSet(outputs: [:], button: nil, camera: try SimulatedCamera(width: 160, height: 120, frameRate: 5))
        let turns = try (0..<6).map { _ in try events.beginTurn(source: .web) }
        let results = Mutex<[Int64: DeviceCommandResult]>([:])
        let group = DispatchGroup()
        for turn in turns {
            group.enter()
            Thread.detachNewThread {
                let dispatcher = ActionDispatcher(devices: devices, pictures: pictures, turn: turn, trigger: "web",
                                                  report: { _ in }, announce: { _ in })
                if let result = try? dispatcher.run(device: DeviceSet.cameraName, command: "capture") {
                    results.withLock { $0[turn] = result }
                }
                group.leave()
            }
        }
        try #require(group.wait(timeout: .now() + 20) == .success)
        let got = results.withLock { $0 }
        #expect(got.count == 6)
        let stored = try pictures.list()
        #expect((1..<6).contains(stored.count), "\(stored.count) pictures for 6 turns at once")
        let ids = Set(stored.map(\.id))
        let logged = try events.events(kinds: [.picture]).map(\.event)
        #expect(Set(logged.compactMap(\.turn)) == Set(turns))
        for event in logged {
            guard case .number(let id) = event.data["picture"] else { Issue.record("no picture id in \(event)"); continue }
            #expect(ids.contains(Int64(id)), "event of turn \(event.turn ?? -1) names picture \(id)")
            #expect((event.data["shared"] == .bool(true)) == (stored.first { $0.id == Int64(id) }?.turn != event.turn))
        }
    }
}
