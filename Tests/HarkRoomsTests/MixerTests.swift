import Foundation
import HarkRooms
import Testing

/// The mixing arithmetic: mix-minus, the limiter, the voice activity detector.
@Suite("Room mixing")
struct MixerTests {
    @Test("each listener hears everyone but itself")
    func mixMinus() {
        let a: [Int16] = [100, -200, 300]
        let b: [Int16] = [10, 20, 30]
        let c: [Int16] = [1, 2, 3]
        let mixes = MixMinus.mix(inputs: [a, b, c], listeners: [0, 1, 2, nil], samples: 3)
        #expect(mixes[0] == [11, 22, 33])
        #expect(mixes[1] == [101, -198, 303])
        #expect(mixes[2] == [110, -180, 330])
        #expect(mixes[3] == [111, -178, 333])  // a listener who sends nothing hears everyone
    }

    @Test("a silent member (no block this tick) adds nothing and still hears the others")
    func silentMember() {
        let mixes = MixMinus.mix(inputs: [[5, 5], nil], listeners: [0, 1], samples: 2)
        #expect(mixes[0] == [0, 0])
        #expect(mixes[1] == [5, 5])
    }

    @Test("loud voices together are limited into 16 bits, and recover once they quieten")
    func limiter() {
        var limiter = Limiter()
        let quiet: [Int32] = [1000, -1000, 500]
        #expect(limiter.apply(quiet) == [1000, -1000, 500])
        let loud: [Int32] = (0..<320).map { $0 % 2 == 0 ? 90_000 : -90_000 }
        let limited = limiter.apply(loud)
        #expect(limited.allSatisfy { abs(Int($0)) <= Int(Limiter.ceiling) })
        #expect(limited.max()! > 30_000)  // scaled, not silenced
        #expect(limiter.gain < 0.4)
        var gain = limiter.gain
        for _ in 0..<10 {
            _ = limiter.apply(quiet)
            #expect(limiter.gain > gain)
            gain = limiter.gain
        }
        for _ in 0..<100 { _ = limiter.apply(quiet) }
        #expect(limiter.apply(quiet) == [1000, -1000, 500])
    }

    @Test("speaking turns on after 40 ms of energy and off only after 300 ms of quiet")
    func voiceActivity() {
        var vad = VoiceActivity()
        let silence = [Int16](repeating: 0, count: 320)
        let speech = (0..<320).map { Int16(10_000 * sin(Double($0) / 5)) }
        vad.update(silence)
        #expect(!vad.speaking && vad.level == 0)
        vad.update(speech)
        #expect(!vad.speaking)
        vad.update(speech)
        #expect(vad.speaking && vad.level > 0.7 && vad.level < 0.8)  // RMS 7071 is −13.3 dBFS
        for _ in 0..<14 { vad.update(silence) }
        #expect(vad.speaking)
        vad.update(silence)
        #expect(!vad.speaking)
    }
}
