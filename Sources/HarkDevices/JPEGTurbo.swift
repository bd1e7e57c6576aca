import CTurboJPEG
import Foundation

/// What the TurboJPEG encoder and decoder share: the handle they own and how its failures read.
struct TurboJPEGHandle {
    /// The `tjhandle` from `tjInitCompress` or `tjInitDecompress`.
    let raw: UnsafeMutableRawPointer

    /// Calls `initialise` (`tjInitCompress` or `tjInitDecompress`) and turns a NULL into a `CameraError`.
    static func make(_ function: String, _ initialise: () -> tjhandle?) throws(CameraError) -> TurboJPEGHandle {
        guard let raw = initialise() else {
            // With no handle, the error string lives in TurboJPEG's thread-local slot (`tjGetErrorStr2(NULL)`).
            let reason = tjGetErrorStr2(nil).map { String(cString: $0) } ?? "unknown error"
            throw CameraError(function: function, code: -1, message: "JPEG: \(function) failed: \(reason)")
        }
        return TurboJPEGHandle(raw: raw)
    }

    /// The failure of the last call on this handle: `tjGetErrorStr2` for the text, `tjGetErrorCode`
    /// for the code (`TJERR_WARNING` 0: the data is damaged but was read; `TJERR_FATAL` 1).
    func error(_ function: String, _ context: String) -> CameraError {
        let reason = tjGetErrorStr2(raw).map { String(cString: $0) } ?? "unknown error"
        return CameraError(function: function, code: tjGetErrorCode(raw), message: "\(context): \(function) failed: \(reason)")
    }
}

/// The limits every TurboJPEG call checks before it reaches C, so bad sizes get a readable error.
enum JPEGLimits {
    /// The largest side libjpeg accepts (`JPEG_MAX_DIMENSION`).
    static let maximumSide = 65_500
    /// The largest picture `JPEGDecoder` decodes: 64 megapixels (192 MB of RGB), far above any camera here.
    static let maximumDecodedPixels = 64_000_000

    static func checkQuality(_ quality: Int, _ function: String) throws(CameraError) {
        guard (1...100).contains(quality) else {
            throw .invalidArgument(function, "JPEG quality \(quality) is out of range: it must be 1…100")
        }
    }

    static func checkSize(width: Int, height: Int, _ function: String) throws(CameraError) {
        guard (1...maximumSide).contains(width), (1...maximumSide).contains(height) else {
            throw .invalidArgument(function, "JPEG size \(width)×\(height) is out of range: each side must be 1…\(maximumSide)")
        }
    }
}
