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

extension CameraError {
    /// A failed system call (`open`, an `ioctl`, `mmap`, `poll`) on `device`, with `strerror` of `code`.
    /// - Parameter problem: what it means here (`in use by another program`); the raw `strerror` when nil.
    static func system(_ function: String, device: String, code: Int32, problem: String? = nil) -> CameraError {
        let reason = String(cString: strerror(code))
        let message = problem.map { "\(device): \($0) (\(function): \(reason))" } ?? "\(device): \(function) failed: \(reason)"
        return CameraError(function: function, code: code, message: message)
    }

    /// Bad input to a camera or encoder call: a size, a quality, a buffer that is too short.
    static func invalidArgument(_ function: String, _ message: String) -> CameraError {
        CameraError(function: function, code: EINVAL, message: message)
    }
}

extension CameraError {
    /// The picture sizes the cameras accept: small enough to allocate, large enough for a driver to honour.
    static let frameSides = 16...8192

    /// Rejects a requested picture size outside `frameSides`, naming the camera.
    static func checkFrameSize(width: Int, height: Int, camera: String) throws(CameraError) {
        guard frameSides.contains(width), frameSides.contains(height) else {
            throw .invalidArgument("size", "\(camera): picture size \(width)×\(height) is not supported: width and height must each be \(frameSides.lowerBound)…\(frameSides.upperBound)")
        }
    }
}
