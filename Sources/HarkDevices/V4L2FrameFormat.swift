/// The format a driver agreed to in `VIDIOC_S_FMT`.
struct V4L2FrameFormat: Equatable {
    var pixelFormat: V4L2PixelFormat
    var width: Int
    var height: Int
    /// The stride of a row in bytes (0 for compressed formats).
    var bytesPerLine: Int
    /// The largest frame in bytes.
    var imageSize: Int
    /// How the YUYV samples use the 8-bit range.
    var range: YUVRange
}
