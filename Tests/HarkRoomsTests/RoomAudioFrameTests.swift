import Foundation
import HarkRooms
import HarkTestSupport
import Testing

/// The audio socket's frame format: what goes out parses back the same, and every kind of bad frame is
/// refused with a reason that says what is wrong.
@Suite("Room audio frames")
struct RoomAudioFrameTests {
    /// A real 20 ms Opus packet of a 440 Hz tone.
    static func packet(sampleRate: Int = 16_000) throws -> [UInt8] {
        let encoder = try OpusEncoder(sampleRate: sampleRate)
        let pcm = (0..<(sampleRate / 50)).map { Int16(8000 * sin(2 * Double.pi * 440 * Double($0) / Double(sampleRate))) }
        return try encoder.encode(pcm)
    }

    @Test("a frame survives bytes → parse with its sequence, timestamp and packet")
    func roundTrip() throws {
        let frame = RoomAudioFrame(sequence: 0xDEAD_BEEF, timestamp: 0x0102_0304, payload: try Self.packet())
        let bytes = frame.bytes
        #expect(bytes.count == RoomAudioFrame.headerBytes + frame.payload.count)
        #expect(Array(bytes[0..<10]) == [1, 1, 0xDE, 0xAD, 0xBE, 0xEF, 1, 2, 3, 4])
        #expect(try RoomAudioFrame.parse(bytes) == frame)
    }

    @Test("48 kHz packets are accepted too: the header is about duration, not rate")
    func wideband() throws {
        let frame = RoomAudioFrame(sequence: 7, timestamp: 0, payload: try Self.packet(sampleRate: 48_000))
        #expect(try RoomAudioFrame.parse(frame.bytes).sequence == 7)
    }

    static func refusal(_ bytes: [UInt8]) -> RoomAudioFrameError? {
        caught(RoomAudioFrameError.self) { try RoomAudioFrame.parse(bytes) }
    }

    @Test("bad frames are refused with the reason")
    func refusals() throws {
        let good = RoomAudioFrame(sequence: 1, timestamp: 2, payload: try Self.packet()).bytes
        #expect(Self.refusal([])?.reason == .truncated)
        #expect(Self.refusal(Array(good[0..<10]))?.reason == .truncated)
        let oversize = Self.refusal(Array(good[0..<10]) + [UInt8](repeating: 0x08, count: 1276))
        #expect(oversize?.reason == .oversize)
        #expect(oversize?.message.contains("1286") == true)
        var version = good
        version[0] = 2
        #expect(Self.refusal(version)?.message == "audio frame version 2 is not supported; this server speaks version 1")
        var codec = good
        codec[1] = 0x7f
        #expect(Self.refusal(codec)?.reason == .codec)
        // TOC byte config 0 is SILK 10 ms; code 3 with a missing count byte is not a valid packet.
        #expect(Self.refusal(Array(good[0..<10]) + [0x00, 0x00])?.reason == .duration)
        #expect(Self.refusal(Array(good[0..<10]) + [0x03])?.reason == .badPacket)
        var stereo = good
        stereo[10] |= 0x04
        #expect(Self.refusal(stereo)?.reason == .channels)
    }
}
