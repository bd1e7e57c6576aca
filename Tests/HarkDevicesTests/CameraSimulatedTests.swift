import Foundation
import Synchronization
import Testing
@testable import HarkDevices

/// A clock that moves on by `step` every time it is read.
final class SteppingClock: Sendable {
    private let reads = Mutex(0)
    let start: Date
    let step: TimeInterval

    init(start: Date, step: TimeInterval) {
        self.start = start
        self.step = step
    }

    func now() -> Date {
        reads.withLock { reads in
            defer { reads += 1 }
            return start.addingTimeInterval(Double(reads) * step)
        }
    }
}

@Suite("Camera: simulated")
struct CameraSimulatedTests {
    static let utc = TimeZone(identifier: "UTC")!
    /// 2026-11-30 05:40:12 UTC.
    static let moment = Date(timeIntervalSince1970: 1_796_017_212)

    @Test("The capture time is written as 2026-11-30 05:40:12 in the camera's time zone")
    func timestampFormat() throws {
        #expect(TestPattern.timestamp(Self.moment, Self.utc) == "2026-11-30 05:40:12")
        let tokyo = try #require(TimeZone(identifier: "Asia/Tokyo"))
        #expect(TestPattern.timestamp(Self.moment, tokyo) == "2026-11-30 14:40:12")
    }

    @Test("The font draws lower case as upper case and anything unknown as a box")
    func font() {
        #expect(PixelFont.rows("a") == PixelFont.rows("A") && PixelFont.rows("A") != PixelFont.rows("B"))
        #expect(PixelFont.rows(" ").allSatisfy { $0 == 0 })
        let box = [UInt8](repeating: 0b11111, count: PixelFont.glyphHeight)
        #expect(PixelFont.rows("ß") == box && PixelFont.rows("€") == box)
        #expect("0123456789:-".allSatisfy { PixelFont.rows($0) != box && PixelFont.rows($0).count == PixelFont.glyphHeight })
    }

    @Test("A capture is a complete JPEG of the configured size",
          arguments: [(640, 480), (320, 240), (333, 250), (16, 16), (1280, 720)])
    func validJPEG(size: (width: Int, height: Int)) throws {
        let camera = try SimulatedCamera(width: size.width, height: size.height, timeZone: Self.utc) { Self.moment }
        let picture = try camera.capture()
        #expect(picture.jpeg.prefix(2) == [0xFF, 0xD8], "SOI")
        #expect(picture.jpeg.suffix(2) == [0xFF, 0xD9], "EOI")
        #expect(picture.width == size.width && picture.height == size.height)
        #expect(picture.source == "simulated" && camera.name == "simulated")
        #expect(picture.capturedAt == Self.moment)
        let decoded = try JPEGDecoder().decodeRGB(picture.jpeg)
        #expect(decoded.width == size.width && decoded.height == size.height)
    }

    @Test("Each bar has its colour, within JPEG tolerance")
    func barColours() throws {
        let camera = try SimulatedCamera(width: 640, height: 480, timeZone: Self.utc) { Self.moment }
        let decoded = try JPEGDecoder().decodeRGB(try camera.capture().jpeg)
        let layout = TestPattern(width: 640, height: 480)
        for (index, expected) in TestPattern.bars.enumerated() {
            let columns = layout.barColumns(index)
            let (red, green, blue) = JPEGTestImages.meanColour(decoded.rgb, width: 640, x: (columns.lowerBound + columns.upperBound) / 2,
                                                               y: layout.barsHeight / 2)
            #expect(abs(red - Double(expected.red)) < 10, "bar \(index) red \(red)")
            #expect(abs(green - Double(expected.green)) < 10, "bar \(index) green \(green)")
            #expect(abs(blue - Double(expected.blue)) < 10, "bar \(index) blue \(blue)")
        }
    }

    @Test("The caption shows the frame number and the capture time")
    func captionMatchesTime() throws {
        let camera = try SimulatedCamera(width: 640, height: 480, timeZone: Self.utc) { Self.moment }
        let decoded = try JPEGDecoder().decodeRGB(try camera.capture().jpeg)
        func caption(_ pattern: TestPattern) -> [UInt8] { Array(pattern.rgb[(pattern.barsHeight * 640 * 3)...]) }
        let seen = Array(decoded.rgb[(TestPattern(width: 640, height: 480).barsHeight * 640 * 3)...])
        let right = TestPattern(width: 640, height: 480, frame: 1, time: Self.moment, timeZone: Self.utc)
        let otherTime = TestPattern(width: 640, height: 480, frame: 1, time: Self.moment.addingTimeInterval(3_723), timeZone: Self.utc)
        let otherFrame = TestPattern(width: 640, height: 480, frame: 2, time: Self.moment, timeZone: Self.utc)
        let match = JPEGTestImages.psnr(caption(right), seen)
        #expect(caption(right) != caption(otherTime) && caption(right) != caption(otherFrame))
        #expect(match > JPEGTestImages.psnr(caption(otherTime), seen) + 6)
        #expect(match > JPEGTestImages.psnr(caption(otherFrame), seen) + 6)
    }

    @Test("Two captures at different times differ, and count frames")
    func capturesDiffer() throws {
        let clock = SteppingClock(start: Self.moment, step: 1)
        let camera = try SimulatedCamera(width: 320, height: 240, timeZone: Self.utc, clock: clock.now)
        let first = try camera.capture(), second = try camera.capture()
        #expect(first.jpeg != second.jpeg)
        #expect(second.capturedAt.timeIntervalSince(first.capturedAt) == 1)
        let decoder = try JPEGDecoder()
        #expect(try decoder.decodeRGB(first.jpeg).rgb != decoder.decodeRGB(second.jpeg).rgb)
    }

    @Test("Like a webcam, the camera gives at most frameRate frames a second; a bad rate is refused")
    func framesComeAtTheFrameRate() throws {
        let camera = try SimulatedCamera(width: 160, height: 120, frameRate: 20)
        _ = try camera.capture()
        let start = ContinuousClock.now
        for _ in 0..<4 { _ = try camera.capture() }
        // Four more frames are four frame boundaries (50 ms apart) later, less however long the first frame's
        // encoding took after its boundary (a millisecond here; unpaced, the four take about as long).
        #expect(ContinuousClock.now - start >= .milliseconds(150), "\(ContinuousClock.now - start)")
        for rate in [0, -5, 1_001] {
            do {
                _ = try SimulatedCamera(frameRate: rate)
                Issue.record("frame rate \(rate) was accepted")
            } catch {
                #expect(error.message.contains("frame rate \(rate) is out of range"), "\(error.message)")
            }
        }
    }

    @Test("Sizes and qualities outside the limits are refused, naming the camera",
          arguments: [(0, 480, 85), (640, -1, 85), (10_000, 480, 85), (15, 15, 85), (640, 480, 0), (640, 480, 101)])
    func invalidSettings(settings: (width: Int, height: Int, quality: Int)) {
        do {
            _ = try SimulatedCamera(width: settings.width, height: settings.height, quality: settings.quality)
            Issue.record("\(settings) was accepted")
        } catch {
            let sizeMessage = error.message.contains("simulated: picture size \(settings.width)×\(settings.height) is not supported")
            #expect(sizeMessage || error.message.contains("quality \(settings.quality) is out of range"), "\(error.message)")
        }
    }
}
