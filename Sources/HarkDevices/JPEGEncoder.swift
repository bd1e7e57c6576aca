import CTurboJPEG
import Foundation
import Synchronization

/// Encodes RGB and YUYV frames to baseline JPEG with libjpeg-turbo's TurboJPEG API.
///
/// Owns one compressor (`tjInitCompress`, freed by `tjDestroy`). TurboJPEG handles must not be used
/// from two threads at once, so the handle lives in a `Mutex`: encodes from different threads are
/// serialised, which is what a still camera needs.
public final class JPEGEncoder: Sendable {
    private let handle: Mutex<TurboJPEGHandle>

    /// Creates a compressor. The corresponding C function is `tjInitCompress`.
    public init() throws(CameraError) {
        handle = Mutex(try TurboJPEGHandle.make("tjInitCompress") { tjInitCompress() })
    }

    deinit {
        handle.withLock { _ = tjDestroy($0.raw) }
    }

    /// Encodes packed 8-bit RGB (`width × height × 3` bytes, rows top to bottom) with 4:2:0 chroma,
    /// the usual choice for photographs. The corresponding C function is `tjCompress2`.
    public func encodeRGB(_ rgb: [UInt8], width: Int, height: Int, quality: Int) throws(CameraError) -> [UInt8] {
        try JPEGLimits.checkSize(width: width, height: height, "tjCompress2")
        try JPEGLimits.checkQuality(quality, "tjCompress2")
        guard rgb.count == width * height * 3 else {
            throw .invalidArgument("tjCompress2", "JPEG: RGB buffer holds \(rgb.count) bytes, \(width)×\(height) needs \(width * height * 3)")
        }
        return try handle.withLock { (handle) throws(CameraError) -> [UInt8] in
            var output: UnsafeMutablePointer<UInt8>?
            var size: UInt = 0
            let status = rgb.withUnsafeBufferPointer { pixels in
                tjCompress2(handle.raw, pixels.baseAddress, Int32(width), 0, Int32(height), Int32(TJPF_RGB.rawValue),
                            &output, &size, Int32(TJSAMP_420.rawValue), Int32(quality), 0)
            }
            return try Self.take(output, size: size, status: status, handle: handle, function: "tjCompress2")
        }
    }

    /// Encodes one YUYV (YUY2, 4:2:2 packed `Y0 U Y1 V`) frame, the format webcams and `vivid` deliver.
    ///
    /// The frame is split into Y, Cb and Cr planes and handed to the JPEG encoder as 4:2:2 YCbCr, so the
    /// camera's own samples are compressed with no colour conversion and no chroma loss beyond the
    /// camera's. Limited-range samples (`.limited`, V4L2's default for YUYV) are stretched to the
    /// full range JPEG (JFIF) expects on the way. The corresponding C function is `tjCompressFromYUVPlanes`.
    /// - Parameters:
    ///   - bytesPerLine: the stride of a row in `yuyv` (V4L2's `bytesperline`); `width × 2` when nil.
    public func encodeYUYV(_ yuyv: UnsafeRawBufferPointer, width: Int, height: Int, bytesPerLine: Int? = nil,
                           range: YUVRange = .limited, quality: Int) throws(CameraError) -> [UInt8] {
        let function = "tjCompressFromYUVPlanes"
        try JPEGLimits.checkSize(width: width, height: height, function)
        try JPEGLimits.checkQuality(quality, function)
        guard width % 2 == 0 else {
            throw .invalidArgument(function, "JPEG: a YUYV frame must have an even width (two pixels share U and V), not \(width)")
        }
        let stride = bytesPerLine ?? width * 2
        guard stride >= width * 2 else {
            throw .invalidArgument(function, "JPEG: YUYV row stride \(stride) is shorter than a \(width)-pixel row (\(width * 2) bytes)")
        }
        let needed = stride * (height - 1) + width * 2
        guard yuyv.count >= needed else {
            throw .invalidArgument(function, "JPEG: YUYV frame holds \(yuyv.count) bytes, \(width)×\(height) with stride \(stride) needs \(needed)")
        }
        var planes = YUYVPlanes(yuyv, width: width, height: height, stride: stride, range: range)
        return try handle.withLock { (handle) throws(CameraError) -> [UInt8] in
            var output: UnsafeMutablePointer<UInt8>?
            var size: UInt = 0
            let status = planes.withPlanePointers { pointers, strides in
                tjCompressFromYUVPlanes(handle.raw, pointers, Int32(width), strides, Int32(height), Int32(TJSAMP_422.rawValue),
                                        &output, &size, Int32(quality), 0)
            }
            return try Self.take(output, size: size, status: status, handle: handle, function: function)
        }
    }

    /// Encodes a YUYV frame held in an array; see `encodeYUYV(_:width:height:bytesPerLine:range:quality:)`.
    public func encodeYUYV(_ yuyv: [UInt8], width: Int, height: Int, bytesPerLine: Int? = nil,
                           range: YUVRange = .limited, quality: Int) throws(CameraError) -> [UInt8] {
        // `withUnsafeBytes` rethrows untyped errors: carry the typed one out in a `Result`.
        try yuyv.withUnsafeBytes { bytes in
            Result { () throws(CameraError) -> [UInt8] in
                try encodeYUYV(bytes, width: width, height: height, bytesPerLine: bytesPerLine, range: range, quality: quality)
            }
        }.get()
    }

    /// Copies TurboJPEG's output into an array and releases it with `tjFree`, on success and on failure.
    private static func take(_ output: UnsafeMutablePointer<UInt8>?, size: UInt, status: Int32,
                             handle: TurboJPEGHandle, function: String) throws(CameraError) -> [UInt8] {
        defer { tjFree(output) }
        guard status == 0, let output else { throw handle.error(function, "JPEG") }
        return Array(UnsafeBufferPointer(start: output, count: Int(size)))
    }
}
