import Foundation
import HarkAudio
import HarkHTTP
#if canImport(Glibc)
import Glibc
#endif

/// The mixing thread's own state and loop (`RoomAudio` starts it): per socket an Opus decoder, a voice
/// activity detector, a limiter and an Opus encoder, touched by this thread only.
struct Mixer {
    private final class Listener {
        let decoder: OpusDecoder
        let encoder: OpusEncoder
        var activity = VoiceActivity()
        var limiter = Limiter()
        var sequence: UInt32 = 0
        var lastSpeaking = false
        var ticksSinceReport = 0

        init() throws(OpusError) {
            decoder = try OpusDecoder(sampleRate: RoomAudio.sampleRate)
            encoder = try OpusEncoder(sampleRate: RoomAudio.sampleRate, bitrate: RoomAudio.bitrate)
        }
    }

    let audio: RoomAudio
    private var listeners: [UInt64: Listener] = [:]
    private let epoch = Mixer.monotonic()
    static let tickNanoseconds: UInt64 = 20_000_000

    init(audio: RoomAudio) {
        self.audio = audio
    }

    /// Ticks every 20 ms on absolute deadlines (`clock_nanosleep` on `CLOCK_MONOTONIC`), so the period does
    /// not drift with the work done; after a stall of more than three ticks it starts afresh from now
    /// rather than rushing to catch up. Returns when no socket is open.
    mutating func run() {
        var deadline = Self.monotonic()
        while let channels = audio.channelsOrStop() {
            let cpuBefore = ThreadTime.cpuSeconds()
            let blocks = tick(channels)
            let cpu = ThreadTime.cpuSeconds() - cpuBefore
            deadline += Self.tickNanoseconds
            let now = Self.monotonic()
            let late = now > deadline + Self.tickNanoseconds
            if now > deadline + 3 * Self.tickNanoseconds { deadline = now }
            audio.count { s in
                s.ticks += 1
                s.memberBlocks += blocks
                s.cpuSeconds += cpu
                if late { s.lateTicks += 1 }
            }
            var until = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
            while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, nil) == EINTR {}
        }
    }

    /// One 20 ms block for every room with an open socket. Returns the number of sockets mixed.
    private mutating func tick(_ channels: [AudioChannel]) -> Int {
        var byRoom: [String: [AudioChannel]] = [:]
        for channel in channels { byRoom[channel.room, default: []].append(channel) }
        let open = Set(channels.map(\.id))
        for id in listeners.keys where !open.contains(id) { listeners[id] = nil }
        var mixed = 0
        var concealed = 0, recovered = 0, sent = 0, dropped = 0
        // An announcement is one more voice in every room, nobody's own: everyone hears it.
        let announcements = audio.nextAnnouncementBlocks()
        let tap = audio.currentMemberTap
        defer { tap?.endOfTick() }
        for (room, members) in byRoom {
            let joined = Set(audio.rooms.joinedMembers(of: room))
            var live: [(AudioChannel, Listener)] = []
            for channel in members {
                guard joined.contains(channel.member) else {
                    // Left, or the room closed: only joined members send or receive.
                    channel.connection?.close(code: 4403, reason: "not joined to room \(room) any more")
                    if channel.local != nil { audio.detachLater(channel) }
                    continue
                }
                if let listener = listeners[channel.id] {
                    live.append((channel, listener))
                } else if let listener = try? Listener() {
                    listeners[channel.id] = listener
                    live.append((channel, listener))
                }
            }
            var inputs: [[Int16]?] = []
            for (channel, listener) in live {
                // `Output` is Sendable, so what leaves the lock is not tied to the inbox (Swift 6.0.3 insists).
                var block: [Int16]?
                // An in-process member's microphone is PCM already, in order and never lost.
                let due: JitterBuffer.Output? = channel.local != nil ? nil : channel.inbox.withLock { $0.jitter.started ? $0.jitter.take() : nil }
                if let local = channel.local { block = local.takeBlock() }
                switch due {
                case .packet(let packet)?: block = try? listener.decoder.decode(packet)
                case .missing(let next)?:
                    block = try? (next.map(listener.decoder.recover(before:)) ?? listener.decoder.conceal())
                    concealed += 1
                    if next != nil { recovered += 1 }
                case nil: break
                }
                inputs.append(block)
                let level = listener.activity.update(block ?? [])
                listener.ticksSinceReport += 1
                let speaking = listener.activity.speaking
                if let tap, let block, channel.local == nil { tap.mixed(room: room, member: channel.member, block: block, speaking: speaking) }
                if speaking != listener.lastSpeaking || listener.ticksSinceReport >= 5 {
                    listener.lastSpeaking = speaking
                    listener.ticksSinceReport = 0
                    audio.report(room: room, member: channel.member, level: level, speaking: speaking)
                }
            }
            let mixes = MixMinus.mix(inputs: inputs + [announcements[room]], listeners: live.indices.map { $0 }, samples: RoomAudio.blockSamples)
            let timestamp = UInt32(truncatingIfNeeded: (Self.monotonic() - epoch) / 1_000_000)
            for (index, (channel, listener)) in live.enumerated() {
                let pcm = listener.limiter.apply(mixes[index])
                if let local = channel.local {
                    local.deliver(pcm)
                    continue
                }
                guard let connection = channel.connection else { continue }
                guard let packet = try? listener.encoder.encode(pcm) else { continue }
                let frame = RoomAudioFrame(sequence: listener.sequence, timestamp: timestamp, payload: packet).bytes
                listener.sequence &+= 1
                if connection.queuedBytes > RoomAudio.maximumQueuedBytes {
                    dropped += 1
                } else if connection.send(binary: frame) {
                    sent += 1
                }
            }
            mixed += live.count
        }
        audio.count { s in
            s.framesConcealed += concealed
            s.framesRecovered += recovered
            s.framesSent += sent
            s.framesDropped += dropped
        }
        return mixed
    }

    static func monotonic() -> UInt64 {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return UInt64(t.tv_sec) * 1_000_000_000 + UInt64(t.tv_nsec)
    }

}
