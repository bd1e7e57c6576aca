import Foundation
@testable import HarkRooms
import Testing

/// The mixing thread's side of the wake phrase in a member's stream: which blocks reach the spotting worker,
/// the cap on members watched at once, and a full queue dropping rather than waiting.
@Suite("Member wake gate")
struct MemberWakeGateTests {
    typealias Key = MemberWakeGate.Key
    static let ada = Key(room: "r", member: "ada")
    static let ben = Key(room: "r", member: "ben")
    static let cy = Key(room: "r", member: "cy")

    /// A block whose samples all hold `n`, so the queue's order can be read back.
    static func block(_ n: Int) -> [Int16] { [Int16](repeating: Int16(n), count: RoomAudio.blockSamples) }

    /// Feeds `key` blocks numbered `range`, speaking or not, one tick each.
    static func feed(_ gate: MemberWakeGate, _ key: Key, _ range: Range<Int>, speaking: Bool) {
        for n in range {
            gate.mixed(room: key.room, member: key.member, block: block(n), speaking: speaking)
            gate.endOfTick()
        }
    }

    /// What the queue holds, as block numbers per member, `-1` for an end.
    static func drained(_ gate: MemberWakeGate) -> [Key: [Int]] {
        var out: [Key: [Int]] = [:]
        for item in gate.take(timeout: 0) {
            switch item {
            case .audio(let key, let samples): out[key, default: []].append(Int(samples[0]))
            case .end(let key): out[key, default: []].append(-1)
            }
        }
        return out
    }

    @Test("a speaking member's blocks go out from the pre-roll to the hangover, then an end; silence costs nothing")
    func stretch() {
        let gate = MemberWakeGate(limits: .init(maximumWatched: 2, preRollBlocks: 25, hangoverBlocks: 25, queueCapacity: 250))
        Self.feed(gate, Self.ada, 0..<30, speaking: false)
        #expect(Self.drained(gate).isEmpty)
        Self.feed(gate, Self.ada, 30..<40, speaking: true)
        Self.feed(gate, Self.ada, 40..<100, speaking: false)
        // 25 blocks of pre-roll (5…29), the speech (30…39), 26 blocks after it (the 26th quiet one passes the
        // 25-block hangover), then the end; nothing after.
        #expect(Self.drained(gate)[Self.ada] == Array(5..<66) + [-1])
        let s = gate.statistics
        #expect(s.offeredBlocks == 100 && s.queuedBlocks == 61 && s.stretches == 1 && s.watchedNow == 0 && s.droppedBlocks == 0)
    }

    @Test("at most maximumWatched members at once; the next starts, with their pre-roll, when a place frees")
    func cap() {
        let gate = MemberWakeGate(limits: .init(maximumWatched: 2, preRollBlocks: 3, hangoverBlocks: 2, queueCapacity: 250))
        for n in 0..<10 {
            for key in [Self.ada, Self.ben, Self.cy] {
                // Ada stops speaking after block 4; Ben and Cy speak throughout.
                gate.mixed(room: key.room, member: key.member, block: Self.block(n), speaking: key != Self.ada || n < 5)
            }
            gate.endOfTick()
        }
        let queued = Self.drained(gate)
        #expect(queued[Self.ada] == [0, 1, 2, 3, 4, 5, 6, 7, -1])
        #expect(queued[Self.ben] == Array(0..<10))
        // Cy waited for Ada's place: it freed at block 7, so Cy's 4…6 go as pre-roll, then on.
        #expect(queued[Self.cy] == Array(4..<10))
        let s = gate.statistics
        #expect(s.unwatchedBlocks == 7 && s.mostWatched == 2 && s.watchedNow == 2)
    }

    @Test("a full queue drops blocks and counts them, but an end still gets through; the mixer never waits")
    func full() {
        let gate = MemberWakeGate(limits: .init(maximumWatched: 2, preRollBlocks: 0, hangoverBlocks: 0, queueCapacity: 10))
        let clock = ContinuousClock()
        let elapsed = clock.measure {
            Self.feed(gate, Self.ada, 0..<30, speaking: true)
            Self.feed(gate, Self.ada, 30..<32, speaking: false)
        }
        #expect(elapsed < .seconds(1))
        #expect(Self.drained(gate)[Self.ada] == Array(0..<10) + [-1])
        #expect(gate.statistics.droppedBlocks == 21)
        // Taken: room again.
        Self.feed(gate, Self.ada, 40..<42, speaking: true)
        #expect(Self.drained(gate)[Self.ada] == [40, 41])
    }

    @Test("a held member is watched through silence, past the cap, until let go")
    func hold() {
        let gate = MemberWakeGate(limits: .init(maximumWatched: 1, preRollBlocks: 2, hangoverBlocks: 1, queueCapacity: 250))
        Self.feed(gate, Self.ben, 0..<3, speaking: true)  // Ben has the only place
        Self.feed(gate, Self.ada, 0..<3, speaking: false)
        #expect(Self.drained(gate)[Self.ada] == nil)
        // The worker heard Ada's wake phrase late, after her stretch: holding her watches her from her pre-roll.
        gate.hold(Self.ada, true)
        #expect(gate.isWatching(Self.ada))
        Self.feed(gate, Self.ada, 3..<10, speaking: false)
        #expect(Self.drained(gate)[Self.ada] == Array(1..<10))
        gate.hold(Self.ada, false)
        Self.feed(gate, Self.ada, 10..<14, speaking: false)
        #expect(Self.drained(gate)[Self.ada] == [10, 11, -1])
        #expect(!gate.isWatching(Self.ada))
        #expect(gate.statistics.watchedNow == 1)
    }

    @Test("a member gone from the mix mid-stretch (hung up) ends after forgetTicks")
    func gone() {
        let gate = MemberWakeGate(limits: .init(maximumWatched: 1, preRollBlocks: 2, hangoverBlocks: 25, queueCapacity: 250, forgetTicks: 5))
        Self.feed(gate, Self.ben, 0..<3, speaking: true)
        for _ in 0..<4 { gate.endOfTick() }  // 5 ticks since his last block
        #expect(Self.drained(gate)[Self.ben] == [0, 1, 2])
        gate.endOfTick()
        #expect(Self.drained(gate)[Self.ben] == [-1])
        #expect(gate.statistics.watchedNow == 0 && !gate.isWatching(Self.ben))
    }

    @Test("a member who is not a person (an appliance linked from another machine) is never watched")
    func appliances() {
        let gate = MemberWakeGate(limits: .init(maximumWatched: 1, preRollBlocks: 2, hangoverBlocks: 2), isPerson: { $0 != Self.ben })
        Self.feed(gate, Self.ben, 0..<5, speaking: true)
        Self.feed(gate, Self.ada, 0..<3, speaking: true)
        #expect(Self.drained(gate) == [Self.ada: [0, 1, 2]])
        #expect(gate.statistics.unwatchedBlocks == 0 && gate.statistics.mostWatched == 1)
    }

    @Test("the worker sleeps until a tick queues something")
    func wakesTheWorker() async throws {
        let gate = MemberWakeGate()
        let feeder = Thread {
            Thread.sleep(forTimeInterval: 0.1)
            Self.feed(gate, Self.ada, 0..<1, speaking: true)
        }
        feeder.start()
        let clock = ContinuousClock()
        let started = clock.now
        let items = gate.take(timeout: 10)
        #expect(items == [.audio(Self.ada, Self.block(0))])
        #expect(started.duration(to: clock.now) < .seconds(5))
    }
}
