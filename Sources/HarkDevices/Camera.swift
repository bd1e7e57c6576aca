import Foundation

/// One still picture, already encoded.
public struct Picture: Sendable {
    /// A complete JPEG file (SOI … EOI).
    public var jpeg: [UInt8]
    public var width: Int
    public var height: Int
    public var capturedAt: Date
    /// Where it came from: `/dev/video0 YUYV`, `/dev/video0 MJPEG`, `simulated`.
    public var source: String

    public init(jpeg: [UInt8], width: Int, height: Int, capturedAt: Date, source: String) {
        self.jpeg = jpeg
        self.width = width
        self.height = height
        self.capturedAt = capturedAt
        self.source = source
    }
}

/// A still camera: `V4L2Camera` (a `/dev/videoN` device) or `SimulatedCamera` (a test pattern).
/// Safe to use from any thread; captures are serialised.
public protocol Camera: AnyObject, Sendable {
    /// The device path, or `simulated`.
    var name: String { get }
    /// Captures one frame and encodes it as JPEG.
    func capture() throws(CameraError) -> Picture
}
