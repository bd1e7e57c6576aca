import Foundation
import Testing
@testable import HarkAudio

@Suite struct CaptureThreadTests {
    /// A source that fails after handing out `good` frames, as a device that is unplugged mid-stream.
    final class FailingSource: AudioSource {
        struct Unplugged: Error, Equatable {}
        let format = PCMFormat.speech
        var left: Int
        init(good: Int) { left = good }
        func read(maxFrames: Int) throws -> PCMBuffer? {
            guard left > 0 else { throw Unplugged() }
            let frames = min(maxFrames, left)
            left -= frames
            return PCMBuffer(format: format, samples: [Int16](repeating: 7, count: frames))
        }
    }

    @Test func handsOutEverySampleInOrderInBlocksOfTheAskedSizeThenEnds() throws {
        let stereo = PCMFormat(sampleRate: 8_000, channels: 2)
        let audio = AudioFixtures.noise(frames: 2_500, amplitude: 10_000, seed: 21, format: stereo)
        let capture = CaptureThread(BufferedAudioSource(audio), blockFrames: 64)
        capture.start()
        var blocks: [PCMBuffer] = []
        while let block = try capture.read(maxFrames: 1_000) { blocks.append(block) }
        // Like a blocking device read: full blocks while the source lasts, the remainder at its end.
        #expect(blocks.map(\.frameCount) == [1_000, 1_000, 500])
        #expect(blocks.allSatisfy { $0.format == stereo })
        #expect(blocks.flatMap(\.samples) == audio.samples)
        #expect(capture.droppedFrames == 0)
        #expect(capture.capturedFrames == 2_500 && capture.consumedFrames == 2_500)
        #expect(try capture.read(maxFrames: 10) == nil)
    }

    @Test func aConsumerTooFarBehindLosesTheOldestFramesAndTheyAreCounted() throws {
        let audio = PCMBuffer(format: .speech, samples: (0..<10_000).map { Int16($0) })
        let capture = CaptureThread(BufferedAudioSource(audio), blockFrames: 100, capacity: 1_000)
        capture.start()
        // Asking for more than the source holds returns once it has ended: by then 9 000 frames were too many.
        let rest = try #require(try capture.read(maxFrames: 20_000))
        #expect(rest.samples == Array(audio.samples.suffix(1_000)))
        #expect(capture.droppedFrames == 9_000)
        #expect(capture.deepestQueue == 1_000)
        // Dropped frames are passed: the consumer's position is the end of the stream.
        #expect(capture.capturedFrames == 10_000 && capture.consumedFrames == 10_000)
    }

    @Test func aFailingSourceHandsOutWhatCameBeforeThenItsError() throws {
        let capture = CaptureThread(FailingSource(good: 300), blockFrames: 100)
        capture.start()
        let before = try #require(try capture.read(maxFrames: 1_000))
        #expect(before.frameCount == 300)
        #expect(throws: FailingSource.Unplugged()) { _ = try capture.read(maxFrames: 1_000) }
    }

    @Test func stopEndsTheThreadAndQueuedAudioCanStillBeRead() throws {
        // An endless source of silence, as a live device is.
        final class Endless: AudioSource {
            let format = PCMFormat.speech
            func read(maxFrames: Int) -> PCMBuffer? {
                Thread.sleep(forTimeInterval: 0.001)
                return PCMBuffer(format: format, samples: [Int16](repeating: 0, count: maxFrames))
            }
        }
        let capture = CaptureThread(Endless(), blockFrames: 160)
        capture.start()
        _ = try capture.read(maxFrames: 320)
        #expect(capture.stop())
        let queued = capture.queuedFrames
        if queued > 0 { #expect(try capture.read(maxFrames: queued)?.frameCount == queued) }
        #expect(try capture.read(maxFrames: 160) == nil)
    }
}
