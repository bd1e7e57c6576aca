import Foundation
import Synchronization

/// A camera with no hardware: each capture draws colour bars, the frame number and the capture time
/// (`TestPattern`) and encodes them with the same `JPEGEncoder` the V4L2 camera uses, so what a caller
/// gets is a real JPEG of the configured size. Source `simulated`.
///
/// Like a real camera it has a frame rate: a capture returns the next frame of a stream running at `frameRate`
/// since the camera was made, waiting up to one frame period for it, so nothing that takes pictures can do so
/// faster than a camera could (`nil`: a frame whenever asked).
public final class SimulatedCamera: Camera {
    /// Always `simulated`.
    public let name = "simulated"
    /// The picture size.
    public let width: Int
    public let height: Int
    /// The JPEG quality, 1…100.
    public let quality: Int
    /// Frames per second of the simulated stream (a webcam's 30 by default), or nil for no wait.
    public let frameRate: Int?
    private let started = ContinuousClock.now
    private let timeZone: TimeZone
    private let clock: @Sendable () -> Date
    private let encoder: JPEGEncoder
    /// Frames captured so far; the lock also serialises captures, as `Camera` promises.
    private let frames = Mutex(0)

    /// - Parameters:
    ///   - width: 16…8192.
    ///   - height: 16…8192.
    ///   - quality: the JPEG quality, 1…100.
    ///   - frameRate: frames per second, 1…1000, or nil for no wait.
    ///   - timeZone: the zone the capture time is written in.
    ///   - clock: the capture time; tests pass a fixed or stepping clock.
    public init(width: Int = 640, height: Int = 480, quality: Int = 85, frameRate: Int? = 30, timeZone: TimeZone = .current,
                clock: @escaping @Sendable () -> Date = Date.init) throws(CameraError) {
        try CameraError.checkFrameSize(width: width, height: height, camera: "simulated")
        try JPEGLimits.checkQuality(quality, "SimulatedCamera")
        if let frameRate, !(1...1000).contains(frameRate) {
            throw .invalidArgument("SimulatedCamera", "frame rate \(frameRate) is out of range: it must be 1…1000 frames per second")
        }
        self.frameRate = frameRate
        self.width = width
        self.height = height
        self.quality = quality
        self.timeZone = timeZone
        self.clock = clock
        encoder = try JPEGEncoder()
    }

    /// Waits for the stream's next frame, draws the test pattern and encodes it (`tjCompress2`).
    public func capture() throws(CameraError) -> Picture {
        try frames.withLock { (frames) throws(CameraError) -> Picture in
            if let frameRate { Self.waitForNextFrame(since: started, frameRate: frameRate) }
            let time = clock()
            let pattern = TestPattern(width: width, height: height, frame: frames + 1, time: time, timeZone: timeZone)
            let jpeg = try encoder.encodeRGB(pattern.rgb, width: width, height: height, quality: quality)
            frames += 1
            return Picture(jpeg: jpeg, width: width, height: height, capturedAt: time, source: name)
        }
    }

    /// Sleeps until the first frame boundary (`started` + k / `frameRate`) after now.
    static func waitForNextFrame(since started: ContinuousClock.Instant, frameRate: Int) {
        let period = Duration.seconds(1) / frameRate
        let elapsed = ContinuousClock.now - started
        let next = started + period * (Int(elapsed / period) + 1)
        Thread.sleep(forTimeInterval: max(0, (next - ContinuousClock.now).timeInterval))
    }
}
