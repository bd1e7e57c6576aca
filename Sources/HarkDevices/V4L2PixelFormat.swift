import CV4L2

/// A V4L2 pixel format: a fourcc code such as `YUYV` or `MJPG`.
public struct V4L2PixelFormat: Hashable, Sendable, CustomStringConvertible {
    /// The code as V4L2 stores it (`v4l2_fourcc(a, b, c, d)`, little-endian characters).
    public let rawValue: UInt32

    public init(rawValue: UInt32) {
        self.rawValue = rawValue
    }

    /// YUV 4:2:2 packed `Y0 U Y1 V` (`V4L2_PIX_FMT_YUYV`): encoded here with `JPEGEncoder`.
    public static let yuyv = V4L2PixelFormat(rawValue: CV4L2_PIX_FMT_YUYV)
    /// Motion-JPEG (`V4L2_PIX_FMT_MJPEG`): each frame is a JPEG, often without Huffman tables.
    public static let mjpeg = V4L2PixelFormat(rawValue: CV4L2_PIX_FMT_MJPEG)
    /// JFIF JPEG (`V4L2_PIX_FMT_JPEG`): some cameras report their JPEG stream under this code.
    public static let jpeg = V4L2PixelFormat(rawValue: CV4L2_PIX_FMT_JPEG)

    /// The formats `V4L2Camera` can turn into a JPEG, in order of preference: YUYV is encoded at the
    /// configured quality; a camera's own JPEG is taken as it is.
    public static let supported: [V4L2PixelFormat] = [.yuyv, .mjpeg, .jpeg]

    /// Whether frames in this format already are JPEGs.
    public var isJPEG: Bool { self == .mjpeg || self == .jpeg }

    /// The four characters (`YUYV`, `MJPG`); a trailing `-BE` marks a big-endian variant.
    public var description: String {
        let big = rawValue & (1 << 31) != 0
        let characters = (0..<4).map { UInt8(truncatingIfNeeded: (rawValue & ~(1 << 31)) >> ($0 * 8)) }
        let text = String(decoding: characters.map { (32...126).contains($0) ? $0 : UInt8(ascii: "?") }, as: UTF8.self)
        return text.trimmingTrailingSpaces + (big ? "-BE" : "")
    }
}

private extension String {
    /// Fourccs pad short names with spaces (`RGB ` is not one, but `Y8  ` style codes exist).
    var trimmingTrailingSpaces: String {
        var trimmed = self
        while trimmed.last == " " { trimmed.removeLast() }
        return trimmed
    }
}
