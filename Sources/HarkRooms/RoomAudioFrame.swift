import COpus

/// One message on a room's audio WebSocket (`/rooms/{id}/audio`), in either direction: a 10-byte header,
/// then one Opus packet holding 20 ms of mono audio (docs/rooms.md, "The audio socket").
///
/// ```
/// offset  size  field
///      0     1  version    1
///      1     1  codec      1 = Opus (any encoder rate: 8, 12, 16, 24 or 48 kHz; mono; 20 ms)
///      2     4  sequence   big-endian UInt32, +1 per frame; wraps
///      6     4  timestamp  big-endian UInt32, the sender's clock in milliseconds; wraps (not used for playout)
///     10   1…1275  the Opus packet (RFC 6716's largest single frame is 1275 bytes)
/// ```
/// The server places a frame by its sequence number (a lost one leaves a gap that Opus' concealment fills);
/// the timestamp is for the sender's own measurements (the benchmark's mouth-to-ear).
public struct RoomAudioFrame: Sendable, Equatable {
    public static let version: UInt8 = 1
    public static let opusCodec: UInt8 = 1
    public static let headerBytes = 10
    /// RFC 6716 §3.2.1: one Opus frame is at most 1275 bytes.
    public static let maximumPayloadBytes = 1275
    public static let maximumBytes = headerBytes + maximumPayloadBytes
    /// Every frame carries 20 ms.
    public static let milliseconds = 20

    public var sequence: UInt32
    public var timestamp: UInt32
    public var payload: [UInt8]

    public init(sequence: UInt32, timestamp: UInt32, payload: [UInt8]) {
        self.sequence = sequence
        self.timestamp = timestamp
        self.payload = payload
    }

    /// The bytes of the WebSocket message.
    public var bytes: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(Self.headerBytes + payload.count)
        out.append(Self.version)
        out.append(Self.opusCodec)
        for shift in stride(from: 24, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: sequence >> UInt32(shift))) }
        for shift in stride(from: 24, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: timestamp >> UInt32(shift))) }
        out.append(contentsOf: payload)
        return out
    }

    /// Reads a message, checking the header and that the payload is one 20 ms mono Opus packet (its TOC byte:
    /// RFC 6716 §3.1), so a bad frame is refused here with a reason instead of upsetting the decoder.
    public static func parse(_ bytes: [UInt8]) throws(RoomAudioFrameError) -> RoomAudioFrame {
        guard bytes.count > headerBytes else {
            throw RoomAudioFrameError(.truncated, "an audio frame is a \(headerBytes)-byte header and an Opus packet; got \(bytes.count) bytes")
        }
        guard bytes.count <= maximumBytes else {
            throw RoomAudioFrameError(.oversize, "an audio frame is at most \(maximumBytes) bytes (a \(maximumPayloadBytes)-byte Opus packet); got \(bytes.count)")
        }
        guard bytes[0] == version else {
            throw RoomAudioFrameError(.version, "audio frame version \(bytes[0]) is not supported; this server speaks version \(version)")
        }
        guard bytes[1] == opusCodec else {
            throw RoomAudioFrameError(.codec, "audio frame codec \(bytes[1]) is not supported; the only codec is \(opusCodec) (Opus)")
        }
        func word(_ at: Int) -> UInt32 {
            UInt32(bytes[at]) << 24 | UInt32(bytes[at + 1]) << 16 | UInt32(bytes[at + 2]) << 8 | UInt32(bytes[at + 3])
        }
        let payload = Array(bytes[headerBytes...])
        let (samples, channels) = payload.withUnsafeBufferPointer { p in
            (opus_packet_get_nb_samples(p.baseAddress!, Int32(p.count), 48_000), opus_packet_get_nb_channels(p.baseAddress!))
        }
        guard samples > 0 else {
            throw RoomAudioFrameError(.badPacket, "the payload is not an Opus packet (\(String(cString: opus_strerror(samples))))")
        }
        guard samples == 48 * Int32(milliseconds) else {
            throw RoomAudioFrameError(.duration, "the Opus packet holds \(Double(samples) / 48) ms of audio; frames must hold \(milliseconds) ms")
        }
        guard channels == 1 else {
            throw RoomAudioFrameError(.channels, "the Opus packet is stereo; rooms take mono")
        }
        return RoomAudioFrame(sequence: word(2), timestamp: word(6), payload: payload)
    }
}

/// Why an audio frame was refused; the socket answers it as `{"error": {"code": "bad_frame", "reason", "message"}}`
/// and stays open.
public struct RoomAudioFrameError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Reason: String, Sendable {
        case truncated, oversize, version, codec, badPacket = "bad_packet", duration, channels
        /// A text message where binary frames were expected.
        case text
    }

    public var reason: Reason
    public var message: String

    public init(_ reason: Reason, _ message: String) {
        self.reason = reason
        self.message = message
    }

    public var description: String { message }
}
