import Foundation
import HarkRooms
import Testing

/// speexdsp's jitter buffer as the mixer uses it, and Opus' decoding and concealment.
@Suite("Room jitter buffer and codec")
struct JitterBufferTests {
    static func packet(_ n: UInt32) -> [UInt8] { [UInt8(truncatingIfNeeded: n), 0xAB] }

    @Test("packets that arrive out of order come out in sequence")
    func reorders() {
        let jitter = JitterBuffer()
        #expect(!jitter.started)
        for n: UInt32 in [0, 2, 1, 3, 5, 4] { jitter.put(sequence: n, payload: Self.packet(n)) }
        #expect(jitter.started)
        var out: [JitterBuffer.Output] = []
        for _ in 0..<6 { out.append(jitter.take()) }
        let packets = out.compactMap { if case .packet(let p) = $0 { return p[0] } else { return nil } }
        #expect(packets == [0, 1, 2, 3, 4, 5])
    }

    @Test("a lost packet is reported missing in its place, with the next one for its FEC, and the stream goes on")
    func lost() {
        let jitter = JitterBuffer()
        for n: UInt32 in [0, 1, 3, 4, 7] { jitter.put(sequence: n, payload: Self.packet(n)) }
        let out = (0..<8).map { _ in jitter.take() }
        #expect(out == [.packet(Self.packet(0)), .packet(Self.packet(1)), .missing(next: Self.packet(3)), .packet(Self.packet(3)),
                        .packet(Self.packet(4)), .missing(next: nil), .missing(next: Self.packet(7)), .packet(Self.packet(7))])
    }

    @Test("Opus carries a tone through, and conceals a lost packet with audio, not silence")
    func opus() throws {
        let encoder = try OpusEncoder(sampleRate: 16_000)
        let decoder = try OpusDecoder(sampleRate: 16_000)
        var energy = 0.0
        for block in 0..<10 {
            let pcm = (0..<320).map { Int16(8000 * sin(2 * Double.pi * 300 * Double(block * 320 + $0) / 16_000)) }
            let decoded = try decoder.decode(try encoder.encode(pcm))
            #expect(decoded.count == 320)
            if block == 9 { energy = decoded.reduce(0) { $0 + Double($1) * Double($1) } / 320 }
        }
        #expect(energy.squareRoot() > 3000)  // the tone's RMS is about 5660
        let recovered = try decoder.recover(before: try encoder.encode([Int16](repeating: 0, count: 320)))
        #expect(recovered.count == 320)
        let concealed = try decoder.conceal()
        #expect(concealed.count == 320)
        #expect(concealed.reduce(0) { $0 + Double($1) * Double($1) } / 320 > 0)
        #expect(throws: OpusError.self) { try encoder.encode([0, 0]) }
    }
}
