import CTurboJPEG
import Foundation
import Synchronization

/// Reads and decodes JPEG files with libjpeg-turbo's TurboJPEG API: headers, full decodes to RGB, and
/// the validity check the MJPEG capture path runs on every frame.
///
/// Owns one decompressor (`tjInitDecompress`, freed by `tjDestroy`), guarded by a `Mutex` because a
/// TurboJPEG handle must not be used from two threads at once.
public final class JPEGDecoder: Sendable {
    private let handle: Mutex<TurboJPEGHandle>

    /// Creates a decompressor. The corresponding C function is `tjInitDecompress`.
    public init() throws(CameraError) {
        handle = Mutex(try TurboJPEGHandle.make("tjInitDecompress") { tjInitDecompress() })
    }

    deinit {
        handle.withLock { _ = tjDestroy($0.raw) }
    }

    /// The frame size from the JPEG's header, without decoding the picture.
    /// The corresponding C function is `tjDecompressHeader3`.
    public func header(_ jpeg: [UInt8]) throws(CameraError) -> (width: Int, height: Int) {
        try Self.checkSignature(jpeg, "tjDecompressHeader3")
        return try handle.withLock { (handle) throws(CameraError) -> (width: Int, height: Int) in
            try Self.readHeader(jpeg, handle)
        }
    }

    /// Decodes the whole picture to packed 8-bit RGB, rows top to bottom.
    ///
    /// Damage that libjpeg only warns about (a truncated frame, corrupt entropy data) is an error here:
    /// `TJFLAG_STOPONWARNING` stops at the first warning, and the error's `code` is `TJERR_WARNING` (0).
    /// Frames without Huffman tables (Motion-JPEG) decode: libjpeg-turbo falls back to the standard tables.
    /// The corresponding C function is `tjDecompress2`.
    public func decodeRGB(_ jpeg: [UInt8]) throws(CameraError) -> (width: Int, height: Int, rgb: [UInt8]) {
        try Self.checkSignature(jpeg, "tjDecompress2")
        return try handle.withLock { (handle) throws(CameraError) -> (width: Int, height: Int, rgb: [UInt8]) in
            let (width, height) = try Self.readHeader(jpeg, handle)
            // The header's size decides the allocation: a damaged or hostile one must not exhaust memory.
            guard width * height <= JPEGLimits.maximumDecodedPixels else {
                throw CameraError.invalidArgument("tjDecompress2", "JPEG: \(width)×\(height) is too large to decode (the limit is \(JPEGLimits.maximumDecodedPixels / 1_000_000) megapixels)")
            }
            var status: Int32 = 0
            let rgb = [UInt8](unsafeUninitializedCapacity: width * height * 3) { pixels, count in
                status = jpeg.withUnsafeBufferPointer { source in
                    tjDecompress2(handle.raw, source.baseAddress, UInt(source.count), pixels.baseAddress,
                                  Int32(width), 0, Int32(height), Int32(TJPF_RGB.rawValue), TJFLAG_STOPONWARNING)
                }
                // A failed decode may leave rows unwritten: hand back only fully initialised storage.
                count = status == 0 ? width * height * 3 : 0
            }
            guard status == 0 else { throw handle.error("tjDecompress2", "JPEG") }
            return (width, height, rgb)
        }
    }

    /// Checks that `jpeg` decodes completely (see `decodeRGB`) and returns its size.
    public func validate(_ jpeg: [UInt8]) throws(CameraError) -> (width: Int, height: Int) {
        let decoded = try decodeRGB(jpeg)
        return (decoded.width, decoded.height)
    }

    private static func readHeader(_ jpeg: [UInt8], _ handle: TurboJPEGHandle) throws(CameraError) -> (width: Int, height: Int) {
        var width: Int32 = 0, height: Int32 = 0, subsampling: Int32 = 0, colorspace: Int32 = 0
        let status = jpeg.withUnsafeBufferPointer { source in
            tjDecompressHeader3(handle.raw, source.baseAddress, UInt(source.count), &width, &height, &subsampling, &colorspace)
        }
        guard status == 0 else { throw handle.error("tjDecompressHeader3", "JPEG") }
        return (Int(width), Int(height))
    }

    /// Rejects what is plainly not a JPEG with a message that says what it starts with, instead of
    /// libjpeg's terser one.
    private static func checkSignature(_ jpeg: [UInt8], _ function: String) throws(CameraError) {
        guard jpeg.count >= 4 else {
            throw .invalidArgument(function, "JPEG: \(jpeg.count) bytes is too short to be a JPEG file")
        }
        guard jpeg[0] == 0xFF, jpeg[1] == 0xD8 else {
            let start = jpeg.prefix(4).map { String(format: "%02X", $0) }.joined(separator: " ")
            throw .invalidArgument(function, "JPEG: not a JPEG file (starts with \(start), not the SOI marker FF D8)")
        }
    }
}
