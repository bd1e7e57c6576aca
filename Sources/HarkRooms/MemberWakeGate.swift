import Dispatch
import Synchronization

/// The mixing thread's side of listening for the wake phrase in members' streams (docs/rooms.md, "The wake
/// phrase in a room"): which members' audio is worth a wake-phrase spotter, and a bounded queue that hands
/// those blocks to the one worker that runs the spotters (HarkServer's `MemberWake`).
///
/// The mixing thread must never wait on the spotters, and they cost CPU, so:
/// - a member is *watched* only while the mixer's energy detector says they are speaking: their blocks go
///   to the queue from `preRollBlocks` before speaking began (kept in a small ring meanwhile) until
///   `hangoverBlocks` after it ended (then an `.end`); a silent room costs one ring copy per member and tick;
/// - at most `maximumWatched` members are watched at once; a member who starts speaking while that many are
///   watched is not (counted as `unwatchedBlocks`) until a place frees, and then starts with their pre-roll;
/// - the queue holds at most `queueCapacity` blocks; a block that finds it full is dropped and counted
///   (`droppedBlocks`), never waited for. `.end` items are always queued (one per watched stretch at most).
///
/// Members that are not people (`isPerson`: an appliance linked from another machine, whose own spotter
/// listens to its microphone) are never watched.
///
/// The worker may `hold` a member (the command after a wake phrase is being listened to): their blocks, silence
/// included, then go to the queue whatever the detector says, until released.
///
/// Thread-safe: the state is behind one `Mutex`, taken once per member and tick by the mixer, briefly by the
/// worker.
public final class MemberWakeGate: MemberAudioTap {
    public struct Key: Hashable, Sendable, CustomStringConvertible {
        public var room: String
        public var member: String
        public init(room: String, member: String) {
            self.room = room
            self.member = member
        }
        public var description: String { "\(member) in \(room)" }
    }

    public enum Item: Sendable, Equatable {
        /// 20 ms of a watched member, 16 kHz mono.
        case audio(Key, [Int16])
        /// The member's watched stretch is over (silent for the hangover, or gone from the mix).
        case end(Key)
    }

    public struct Limits: Sendable, Equatable {
        /// Members watched at once.
        public var maximumWatched: Int
        /// Blocks from before speaking began that go with it (0.5 s).
        public var preRollBlocks: Int
        /// Blocks after the detector's speaking ended that are still watched (0.5 s; the detector itself
        /// already waits 300 ms of quiet before it says so).
        public var hangoverBlocks: Int
        /// Blocks the queue holds (5 s of one stream).
        public var queueCapacity: Int
        /// A member not mixed for this many ticks is forgotten (gone: left, hung up).
        public var forgetTicks: Int

        public init(maximumWatched: Int = 2, preRollBlocks: Int = 25, hangoverBlocks: Int = 25, queueCapacity: Int = 250, forgetTicks: Int = 50) {
            self.maximumWatched = maximumWatched
            self.preRollBlocks = preRollBlocks
            self.hangoverBlocks = hangoverBlocks
            self.queueCapacity = queueCapacity
            self.forgetTicks = forgetTicks
        }
    }

    /// Counters since the gate was made.
    public struct Statistics: Sendable, Equatable {
        /// Blocks the mixer passed (every person member, every tick).
        public var offeredBlocks = 0
        /// Blocks queued for the worker.
        public var queuedBlocks = 0
        /// Blocks of a watched member dropped because the queue was full.
        public var droppedBlocks = 0
        /// Blocks of a speaking member not watched because `maximumWatched` others were.
        public var unwatchedBlocks = 0
        /// Watched stretches begun.
        public var stretches = 0
        /// Members watched now, and the most at once.
        public var watchedNow = 0
        public var mostWatched = 0
    }

    private struct Member {
        var ignored = false
        var preRoll: [[Int16]] = []
        var watching = false
        var held = false
        var quietBlocks = 0
        var lastTick: UInt64 = 0
    }

    private struct State {
        var members: [Key: Member] = [:]
        var queue: [Item] = []
        var queuedAudio = 0
        var tick: UInt64 = 0
        var queuedThisTick = false
        var statistics = Statistics()
    }

    public let limits: Limits
    private let isPerson: @Sendable (Key) -> Bool
    private let state = Mutex(State())
    private let ready = DispatchSemaphore(value: 0)

    /// - Parameter isPerson: asked once per member when first mixed (on the mixing thread: must be quick).
    public init(limits: Limits = Limits(), isPerson: @escaping @Sendable (Key) -> Bool = { _ in true }) {
        self.limits = limits
        self.isPerson = isPerson
    }

    public var statistics: Statistics { state.withLock { $0.statistics } }

    // MARK: The mixing thread

    public func mixed(room: String, member: String, block: [Int16], speaking: Bool) {
        let key = Key(room: room, member: member)
        state.withLock { s in
            s.statistics.offeredBlocks += 1
            var m = s.members[key] ?? Member(ignored: !isPerson(key))
            m.lastTick = s.tick
            if m.ignored {
                s.members[key] = m
                return
            }
            if !m.watching {
                if (speaking || m.held) && s.statistics.watchedNow < limits.maximumWatched {
                    m.watching = true
                    m.quietBlocks = 0
                    s.statistics.stretches += 1
                    s.statistics.watchedNow += 1
                    s.statistics.mostWatched = max(s.statistics.mostWatched, s.statistics.watchedNow)
                    for earlier in m.preRoll { Self.enqueue(.audio(key, earlier), &s, capacity: limits.queueCapacity) }
                    m.preRoll.removeAll(keepingCapacity: true)
                } else {
                    if speaking { s.statistics.unwatchedBlocks += 1 }
                    if limits.preRollBlocks > 0 {
                        if m.preRoll.count >= limits.preRollBlocks { m.preRoll.removeFirst() }
                        m.preRoll.append(block)
                    }
                    s.members[key] = m
                    return
                }
            }
            Self.enqueue(.audio(key, block), &s, capacity: limits.queueCapacity)
            m.quietBlocks = speaking || m.held ? 0 : m.quietBlocks + 1
            if m.quietBlocks > limits.hangoverBlocks {
                m.watching = false
                s.statistics.watchedNow -= 1
                Self.enqueue(.end(key), &s, capacity: limits.queueCapacity)
            }
            s.members[key] = m
        }
    }

    public func endOfTick() {
        let wake = state.withLock { s -> Bool in
            s.tick += 1
            let tick = s.tick
            for (key, m) in s.members where tick - m.lastTick > UInt64(limits.forgetTicks) {
                s.members[key] = nil
                if m.watching {
                    s.statistics.watchedNow -= 1
                    Self.enqueue(.end(key), &s, capacity: limits.queueCapacity)
                }
            }
            defer { s.queuedThisTick = false }
            return s.queuedThisTick
        }
        if wake { ready.signal() }
    }

    private static func enqueue(_ item: Item, _ s: inout State, capacity: Int) {
        if case .audio = item {
            guard s.queuedAudio < capacity else {
                s.statistics.droppedBlocks += 1
                return
            }
            s.queuedAudio += 1
            s.statistics.queuedBlocks += 1
        }
        s.queue.append(item)
        s.queuedThisTick = true
    }

    // MARK: The worker

    /// Everything queued, oldest first, waiting up to `timeout` seconds for something when the queue is empty.
    public func take(timeout: Double) -> [Item] {
        let items = takeNow()
        if !items.isEmpty { return items }
        _ = ready.wait(timeout: .now() + timeout)
        return takeNow()
    }

    private func takeNow() -> [Item] {
        state.withLock { s in
            defer {
                s.queue.removeAll(keepingCapacity: true)
                s.queuedAudio = 0
            }
            return s.queue
        }
    }

    /// Keeps (or stops keeping) `key` watched whatever the energy detector says: the worker is listening to the
    /// command after a wake phrase, pauses included. Holding a member whose stretch had ended watches them again
    /// from their pre-roll on (past the cap: they are already being served).
    public func hold(_ key: Key, _ on: Bool) {
        state.withLock { s in
            guard var m = s.members[key] else { return }
            m.held = on
            m.quietBlocks = 0
            if on && !m.watching {
                m.watching = true
                s.statistics.stretches += 1
                s.statistics.watchedNow += 1
                s.statistics.mostWatched = max(s.statistics.mostWatched, s.statistics.watchedNow)
                for earlier in m.preRoll { Self.enqueue(.audio(key, earlier), &s, capacity: limits.queueCapacity) }
                m.preRoll.removeAll(keepingCapacity: true)
            }
            s.members[key] = m
        }
    }

    /// Whether `key`'s blocks are going to the queue now.
    public func isWatching(_ key: Key) -> Bool {
        state.withLock { $0.members[key]?.watching ?? false }
    }
}
