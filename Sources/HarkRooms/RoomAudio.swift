import Dispatch
import Foundation
import HarkHTTP
import Synchronization

/// The rooms' live audio: every member's audio socket (`RoomAudioSocket`) feeds a jitter buffer, and one
/// mixing thread, every 20 ms, takes each member's due packet (decoding it, or concealing it when lost),
/// mixes mix-minus for each listener, encodes it with that listener's own Opus encoder and queues it on
/// their socket (docs/rooms.md).
///
/// The thread never waits on anything slow: it reads the rooms' in-memory membership, takes each member's
/// lock only to pull one packet, hands speaking/level reports to a queue of their own (room events go out
/// through the events sockets, which may be busy replaying from SQLite), and skips a listener's frame when
/// that listener has more than `maximumQueuedFrames` frames not yet written (a slow phone loses frames; the
/// others are not held up). It runs while at least one audio socket is open.
///
/// Thread-safe: every stored property is immutable, a `Mutex` or an `Atomic`.
public final class RoomAudio: Sendable {
    /// Decoding and mixing rate.
    public static let sampleRate = 16_000
    public static let blockSamples = sampleRate / 50
    /// Bits per second of each listener's stream.
    public static let bitrate = 32_000
    /// A listener with more than this many frames' worth of bytes queued has the next frame dropped.
    public static let maximumQueuedFrames = 10
    /// Those frames in bytes, at the stream's nominal frame size (header and 20 ms at `bitrate`): a count of
    /// bytes rather than of the frames actually queued, since silence packets are a few bytes and speech ones
    /// eighty (a limit from the current frame's size once skipped frames after every loud one).
    public static let maximumQueuedBytes = maximumQueuedFrames * (RoomAudioFrame.headerBytes + bitrate / 8 / 50)

    /// Counters since the server started, for the benchmark and for tests.
    public struct Statistics: Sendable, Equatable {
        /// Mixing ticks run, and those that started more than a tick late (the thread fell behind).
        public var ticks = 0
        public var lateTicks = 0
        /// Member-blocks mixed (one per open socket per tick): CPU per member is `cpuSeconds / memberBlocks`
        /// per 20 ms.
        public var memberBlocks = 0
        /// CPU time of the mixing thread (`CLOCK_THREAD_CPUTIME_ID`).
        public var cpuSeconds = 0.0
        public var framesReceived = 0
        public var framesRefused = 0
        /// Blocks concealed because a member's packet was lost or late.
        public var framesConcealed = 0
        /// Of those, the ones rebuilt from the next packet's in-band FEC rather than guessed.
        public var framesRecovered = 0
        public var framesSent = 0
        /// Frames not queued for a listener that was too far behind.
        public var framesDropped = 0
        /// Whether the mixing thread got real-time scheduling (`SCHED_FIFO`) the last time it started.
        public var realtimeScheduling = false
    }

    public let rooms: Rooms
    private let registry = Mutex(Registry())
    private let counters = Mutex(Statistics())
    /// Room events from the mixer go out from here, in order, so the mixer never waits on an events socket.
    private let reports = DispatchQueue(label: "hark.rooms.audio-events")

    struct Registry {
        var channels: [UInt64: AudioChannel] = [:]
        var next: UInt64 = 1
        var running = false
        /// Per room, announcement audio not yet mixed (`announce(_:rooms:)`).
        var announcements: [String: Announcement] = [:]
    }

    public init(rooms: Rooms) {
        self.rooms = rooms
    }

    private let applianceMember = Mutex<ApplianceMember?>(nil)
    /// Who else hears each person member's decoded audio (`setMemberTap`, MemberAudioTap.swift).
    let memberTap = Mutex<(any MemberAudioTap)?>(nil)

    /// The appliance as a possible member of these rooms (`hark run`); nil where there is none (`hark serve`).
    public var appliance: ApplianceMember? { applianceMember.withLock { $0 } }

    func install(_ member: ApplianceMember) {
        applianceMember.withLock { $0 = member }
    }

    public var statistics: Statistics { counters.withLock { $0 } }

    func count(_ update: (inout Statistics) -> Void) {
        counters.withLock { update(&$0) }
    }

    /// How many audio sockets are open (in every room).
    public var openSockets: Int { registry.withLock { $0.channels.count } }

    /// Adds a member's socket to the mix (closing an older socket of the same member in the same room), and
    /// starts the mixing thread if it is not running.
    func attach(room: String, member: String, connection: WebSocketConnection) -> AudioChannel {
        attach { id in AudioChannel(id: id, room: room, member: member, connection: connection) }
    }

    /// Adds an in-process member (the appliance itself, `ApplianceMember`) to the mix: its microphone and
    /// speaker are PCM queues, not a socket, but it is mixed (and hears mix-minus) like everyone else.
    func attachLocal(room: String, member: String) -> AudioChannel {
        attach { id in AudioChannel(id: id, room: room, member: member, local: LocalAudio()) }
    }

    private func attach(_ make: (UInt64) -> AudioChannel) -> AudioChannel {
        let (channel, replaced, start) = registry.withLock { r -> (AudioChannel, [AudioChannel], Bool) in
            let channel = make(r.next)
            let room = channel.room, member = channel.member
            r.next += 1
            let replaced = r.channels.values.filter { $0.room == room && $0.member == member }
            for old in replaced { r.channels[old.id] = nil }
            r.channels[channel.id] = channel
            let start = !r.running
            r.running = true
            return (channel, replaced, start)
        }
        for old in replaced {
            old.connection?.close(code: 4409, reason: "replaced by a newer audio socket of the same member")
            old.local?.cut()
        }
        if start {
            let thread = Thread { [self] in
                // The name tools see (top -H, /proc/PID/task/*/comm; the benchmark finds the thread by it).
                // Foundation's Thread.name reached the kernel only for the first such thread of a process.
                Self.nameThisThread("hark-rooms-mix")
                let realtime = Self.requestRealtime()
                self.count { $0.realtimeScheduling = realtime }
                var mixer = Mixer(audio: self)
                mixer.run()
            }
            thread.qualityOfService = .userInteractive
            thread.start()
        }
        return channel
    }

    /// `SCHED_FIFO` at a low real-time priority (10, as the microphone's capture thread) for the calling
    /// thread, so busy threads elsewhere on the machine cannot make it late: it works a fraction of each 20 ms
    /// and sleeps the rest (and the kernel's real-time throttling keeps 5% of every second for others even if it
    /// did not). Refused (EPERM) without the privilege (root, CAP_SYS_NICE or an RLIMIT_RTPRIO); the thread then
    /// runs at normal priority.
    static func requestRealtime() -> Bool {
        #if os(Linux)
        var parameters = sched_param()
        parameters.sched_priority = 10
        return pthread_setschedparam(pthread_self(), Int32(SCHED_FIFO), &parameters) == 0
        #else
        return false
        #endif
    }

    /// Names the calling thread for the kernel (Linux: `/proc/thread-self/comm`, at most 15 bytes, what `top -H`
    /// shows); elsewhere Foundation's name. The rooms' threads (the mixer, the wake-phrase worker) use it.
    public static func nameThisThread(_ name: String) {
        #if os(Linux)
        if let file = FileHandle(forWritingAtPath: "/proc/thread-self/comm") {
            file.write(Data(name.utf8.prefix(15)))
            try? file.close()
        }
        #else
        Thread.current.name = name
        #endif
    }

    /// Takes a closed socket out of the mix. A member whose last audio socket in the room closed (they hung up,
    /// or vanished and missed the pings) leaves the room, so the others see `member:left`.
    func detach(_ channel: AudioChannel) {
        let stillThere = registry.withLock { r -> Bool in
            guard r.channels[channel.id] != nil else { return true }  // replaced: the newer socket stays
            r.channels[channel.id] = nil
            return r.channels.values.contains { $0.room == channel.room && $0.member == channel.member }
        }
        if !stillThere && rooms.isJoined(channel.member, in: channel.room) {
            _ = try? rooms.leave(room: channel.room, member: channel.member)
        }
    }

    /// `detach`, off the mixing thread (leaving may write the rooms database): for an in-process member the
    /// mixer found no longer joined.
    func detachLater(_ channel: AudioChannel) {
        channel.local?.cut()
        reports.async { [self] in detach(channel) }
    }

    /// The open channels, or nil (and the thread marked stopped) when there are none.
    func channelsOrStop() -> [AudioChannel]? {
        registry.withLock { r in
            if r.channels.isEmpty {
                r.running = false
                r.announcements = [:]  // nobody left to hear the rest
                return nil
            }
            return r.channels.values.sorted { $0.id < $1.id }
        }
    }

    /// Announcement audio of one room: everything queued, and how much of it has been mixed.
    struct Announcement {
        var samples: [Int16] = []
        var played = 0
        var waiting: Int { samples.count - played }
    }

    /// At most this much announcement audio waits to be mixed in a room (a minute): more is refused, not queued.
    public static let maximumAnnouncementSamples = 60 * sampleRate

    /// Mixes `samples` (16 kHz mono, e.g. eSpeak NG saying an announcement) into the rooms that have an audio
    /// socket open — all of them, or those of `rooms` — for every member, after whatever is still playing there.
    /// Returns the rooms that will hear it (none when no socket is open in them: nobody is listening, and
    /// nothing is kept for later), or nil when one of them already holds `maximumAnnouncementSamples`.
    public func announce(_ samples: [Int16], rooms only: Set<String>? = nil) -> Set<String>? {
        registry.withLock { r -> Set<String>? in
            var open = Set(r.channels.values.map(\.room))
            if let only { open.formIntersection(only) }
            for room in open where (r.announcements[room]?.waiting ?? 0) + samples.count > Self.maximumAnnouncementSamples { return nil }
            for room in open { r.announcements[room, default: Announcement()].samples.append(contentsOf: samples) }
            return open
        }
    }

    /// Each room's next 20 ms of announcement, for the rooms where one is playing (the mixing thread adds it).
    func nextAnnouncementBlocks() -> [String: [Int16]] {
        registry.withLock { r -> [String: [Int16]] in
            var blocks: [String: [Int16]] = [:]
            for (room, var queue) in r.announcements {
                let end = min(queue.samples.count, queue.played + Self.blockSamples)
                var block = Array(queue.samples[queue.played..<end])
                block += [Int16](repeating: 0, count: Self.blockSamples - block.count)
                blocks[room] = block
                queue.played = end
                r.announcements[room] = end == queue.samples.count ? nil : queue
            }
            return blocks
        }
    }

    /// Sends a member's speaking state and level to the room, off the mixing thread.
    func report(room: String, member: String, level: Double, speaking: Bool) {
        let rooms = rooms
        reports.async { rooms.reportAudio(room: room, member: member, level: level, speaking: speaking) }
    }
}

/// One member's audio in one room: either a socket, whose jitter buffer is filled by the socket's queue and
/// emptied by the mixing thread under `inbox`'s lock, or an in-process member's PCM queues (`local`).
final class AudioChannel: Sendable {
    struct Inbox {
        var jitter = JitterBuffer()
    }

    /// Where the member's audio comes from and goes to: exactly one of the two.
    enum Endpoint: Sendable {
        case socket(WebSocketConnection)
        case local(LocalAudio)
    }

    let id: UInt64
    let room: String
    let member: String
    let endpoint: Endpoint
    let inbox = Mutex(Inbox())

    /// The member's socket; nil for an in-process member.
    var connection: WebSocketConnection? {
        if case .socket(let connection) = endpoint { connection } else { nil }
    }

    /// The in-process member's microphone and speaker queues; nil for a socket.
    var local: LocalAudio? {
        if case .local(let local) = endpoint { local } else { nil }
    }

    init(id: UInt64, room: String, member: String, connection: WebSocketConnection) {
        self.id = id
        self.room = room
        self.member = member
        endpoint = .socket(connection)
    }

    init(id: UInt64, room: String, member: String, local: LocalAudio) {
        self.id = id
        self.room = room
        self.member = member
        endpoint = .local(local)
    }
}

/// An in-process member's audio, as 16 kHz PCM: what its microphone sent, waiting to be mixed (a queue that
/// plays the jitter buffer's part: it fills to `prebufferSamples` before the mixer takes 20 ms a tick, and
/// fills again after running dry), and what the mixer made for it, waiting to be played.
final class LocalAudio: Sendable {
    struct Queues {
        var inbound: [Int16] = []
        var started = false
        var outbound: [Int16] = []
        var cut = false
    }

    /// The microphone's audio is mixed once this much is queued: the loop hands over 100 ms at a time, the
    /// mixer takes 20 ms, so 150 ms leaves room for a late block.
    static let prebufferSamples = RoomAudio.sampleRate * 3 / 20
    /// At most a second waits either way; older audio is dropped (a stalled loop or speaker loses, the room
    /// goes on).
    static let maximumQueuedSamples = RoomAudio.sampleRate

    let queues = Mutex(Queues())

    /// Queues microphone audio for the mix.
    func put(_ samples: [Int16]) {
        queues.withLock { q in
            q.inbound += samples
            if q.inbound.count > Self.maximumQueuedSamples { q.inbound.removeFirst(q.inbound.count - Self.maximumQueuedSamples) }
        }
    }

    /// Microphone samples queued and not yet mixed.
    var inboundSamples: Int { queues.withLock { $0.inbound.count } }

    /// The next 20 ms of the microphone for the mixer, nil while filling up (or run dry: then it fills again).
    func takeBlock() -> [Int16]? {
        queues.withLock { q -> [Int16]? in
            if !q.started {
                guard q.inbound.count >= Self.prebufferSamples else { return nil }
                q.started = true
            }
            guard q.inbound.count >= RoomAudio.blockSamples else {
                q.started = false
                return nil
            }
            let block = Array(q.inbound.prefix(RoomAudio.blockSamples))
            q.inbound.removeFirst(RoomAudio.blockSamples)
            return block
        }
    }

    /// The mixer's 20 ms for this member.
    func deliver(_ samples: [Int16]) {
        queues.withLock { q in
            q.outbound += samples
            if q.outbound.count > Self.maximumQueuedSamples { q.outbound.removeFirst(q.outbound.count - Self.maximumQueuedSamples) }
        }
    }

    /// Everything mixed for this member since the last call.
    func takeOutput() -> [Int16] {
        queues.withLock { q in
            defer { q.outbound.removeAll(keepingCapacity: true) }
            return q.outbound
        }
    }

    /// Taken out of the mix (left, or replaced).
    func cut() { queues.withLock { $0.cut = true } }
    var isCut: Bool { queues.withLock { $0.cut } }
}
