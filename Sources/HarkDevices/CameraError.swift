import Foundation

/// A camera failure: V4L2 (`ioctl` request name and `errno`), TurboJPEG, or the device being absent.
public struct CameraError: Error, Sendable, CustomStringConvertible {
    /// The call that failed: `open`, `VIDIOC_S_FMT`, `tjCompress2`, …
    public var function: String
    /// `errno` or the library's code (0 when there is none).
    public var code: Int32
    /// A readable message naming the device: `/dev/video0: no such device (open: …)`.
    public var message: String

    public init(function: String, code: Int32, message: String) {
        self.function = function
        self.code = code
        self.message = message
    }

    public var description: String { message }
}
