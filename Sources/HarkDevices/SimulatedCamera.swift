import Foundation
import Synchronization

/// A camera with no hardware: each capture draws colour bars, the frame number and the capture time
/// (`TestPattern`) and encodes them with the same `JPEGEncoder` the V4L2 camera uses, so what a caller
/// gets is a real JPEG of the configured size. Source `simulated`.
public final class SimulatedCamera: Camera {
    /// Always `simulated`.
    public let name = "simulated"
    /// The picture size.
    public let width: Int
    public let height: Int
    /// The JPEG quality, 1…100.
    public let quality: Int
    private let timeZone: TimeZone
    private let clock: @Sendable () -> Date
    private let encoder: JPEGEncoder
    /// Frames captured so far; the lock also serialises captures, as `Camera` promises.
    private let frames = Mutex(0)

    /// - Parameters:
    ///   - width: 16…8192.
    ///   - height: 16…8192.
    ///   - quality: the JPEG quality, 1…100.
    ///   - timeZone: the zone the capture time is written in.
    ///   - clock: the capture time; tests pass a fixed or stepping clock.
    public init(width: Int = 640, height: Int = 480, quality: Int = 85, timeZone: TimeZone = .current,
                clock: @escaping @Sendable () -> Date = Date.init) throws(CameraError) {
        try CameraError.checkFrameSize(width: width, height: height, camera: "simulated")
        try JPEGLimits.checkQuality(quality, "SimulatedCamera")
        self.width = width
        self.height = height
        self.quality = quality
        self.timeZone = timeZone
        self.clock = clock
        encoder = try JPEGEncoder()
    }

    /// Draws the next frame of the test pattern and encodes it (`tjCompress2`).
    public func capture() throws(CameraError) -> Picture {
        try frames.withLock { (frames) throws(CameraError) -> Picture in
            let time = clock()
            let pattern = TestPattern(width: width, height: height, frame: frames + 1, time: time, timeZone: timeZone)
            let jpeg = try encoder.encodeRGB(pattern.rgb, width: width, height: height, quality: quality)
            frames += 1
            return Picture(jpeg: jpeg, width: width, height: height, capturedAt: time, source: name)
        }
    }
}
