import CSpeexDSP

/// speexdsp's adaptive jitter buffer (`jitter_buffer_init`) for one member's Opus packets: packets go in as
/// they arrive, in any order, placed by sequence number; every 20 ms the mixer takes the one due now. The
/// buffer adapts its delay to the arrival jitter it sees (trading late packets against delay), drops
/// duplicates and packets too late to play, and says when one is missing so the decoder conceals it.
///
/// Timestamps are the sequence number × 320 (16 kHz samples per 20 ms frame), so the sender's clock is never
/// trusted. Not thread-safe: the audio socket's queue puts and the mixer gets, under the member's lock.
public final class JitterBuffer {
    /// What the buffer has for the tick now due.
    public enum Output: Equatable, Sendable {
        /// The packet for this tick.
        case packet([UInt8])
        /// Lost or late (or the buffer asks for one more frame of delay): conceal. `next` is the packet after
        /// the missing one when it has already arrived: its in-band FEC (Opus' LBRR, when the sender turned it
        /// on) carries a coarse copy of the lost frame.
        case missing(next: [UInt8]?)
    }

    /// Timestamp units per frame.
    public static let span: UInt32 = 320
    private let handle: OpaquePointer
    private var scratch = [CChar](repeating: 0, count: RoomAudioFrame.maximumPayloadBytes)
    /// Whether any packet went in (until then `take` is `.missing` and nothing needs concealing).
    public private(set) var started = false
    /// The packets put in recently, by timestamp, for FEC: speexdsp has no way to look at the next packet.
    private var recent: [UInt32: [UInt8]] = [:]
    /// How many frames `recent` keeps behind the playout point.
    private static let recentFrames: UInt32 = 50

    public init() {
        handle = jitter_buffer_init(Int32(Self.span))
        // Adapt in whole frames; a concealed stretch is one frame.
        var step = Int32(Self.span)
        jitter_buffer_ctl(handle, JITTER_BUFFER_SET_DELAY_STEP, &step)
        jitter_buffer_ctl(handle, JITTER_BUFFER_SET_CONCEALMENT_SIZE, &step)
        // One frame of delay beyond what the buffer's own estimate asks for: on a busy machine a phone's frames
        // come in bunches, and without it a late frame is concealed (a click in the voice) several times a
        // minute; 20 ms more delay is cheap next to the 150 ms budget.
        var margin = Int32(Self.span)
        jitter_buffer_ctl(handle, JITTER_BUFFER_SET_MARGIN, &margin)
    }

    deinit { jitter_buffer_destroy(handle) }

    /// Puts a packet in (`jitter_buffer_put`, which copies it).
    public func put(sequence: UInt32, payload: [UInt8]) {
        started = true
        recent[sequence &* Self.span] = payload
        payload.withUnsafeBufferPointer { p in
            p.withMemoryRebound(to: CChar.self) { bytes in
                var packet = JitterBufferPacket(data: UnsafeMutablePointer(mutating: bytes.baseAddress), len: UInt32(bytes.count),
                                                timestamp: sequence &* Self.span, span: Self.span,
                                                sequence: UInt16(truncatingIfNeeded: sequence), user_data: 0)
                jitter_buffer_put(handle, &packet)
            }
        }
    }

    /// The packet due now, then one tick on (`jitter_buffer_get`, `jitter_buffer_tick`).
    public func take() -> Output {
        let due = UInt32(bitPattern: jitter_buffer_get_pointer_timestamp(handle))
        let capacity = UInt32(scratch.count)
        let (status, length) = scratch.withUnsafeMutableBufferPointer { buffer -> (Int32, Int) in
            var packet = JitterBufferPacket(data: buffer.baseAddress, len: capacity, timestamp: 0, span: 0, sequence: 0, user_data: 0)
            var offset: Int32 = 0
            let status = jitter_buffer_get(handle, &packet, Int32(Self.span), &offset)
            return (status, Int(packet.len))
        }
        jitter_buffer_tick(handle)
        // Keep what may still be someone's "next": a little behind the playout point, and ahead of it no further
        // than speexdsp itself keeps (200 packets), so odd sequence numbers cannot grow it (timestamps wrap:
        // compare by difference).
        recent = recent.filter { $0.key &- due <= 200 * Self.span || due &- $0.key <= Self.recentFrames * Self.span }
        guard status == JITTER_BUFFER_OK, length > 0, length <= scratch.count else {
            return .missing(next: status == JITTER_BUFFER_MISSING ? recent[due &+ Self.span] : nil)
        }
        return .packet(scratch[0..<length].map { UInt8(bitPattern: $0) })
    }

    /// Packets waiting (`JITTER_BUFFER_GET_AVAILABLE_COUNT`).
    public var available: Int {
        var count: Int32 = 0
        jitter_buffer_ctl(handle, JITTER_BUFFER_GET_AVAILABLE_COUNT, &count)
        return Int(count)
    }
}
