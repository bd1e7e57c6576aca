import Foundation
import Testing
@testable import HarkAudio

/// The byte form of 16-bit samples the server, the rooms and Wyoming share: low byte first, both ways.
@Suite struct LittleEndianPCMTests {
    @Test func samplesBecomeLowByteFirstAndBack() {
        let samples: [Int16] = [0, 1, -1, 0x1234, Int16.min, Int16.max]
        let bytes = LittleEndianPCM.bytes(samples)
        #expect(bytes == [0, 0, 1, 0, 0xFF, 0xFF, 0x34, 0x12, 0x00, 0x80, 0xFF, 0x7F])
        #expect(LittleEndianPCM.samples(bytes) == samples)
        #expect(LittleEndianPCM.samples(Data(bytes)) == samples)
        #expect(LittleEndianPCM.samples(bytes[2...]) == Array(samples.dropFirst()), "a slice keeps its own indices")
        #expect(LittleEndianPCM.samples(bytes + [7]) == samples, "an odd last byte is not a sample")
    }
}
