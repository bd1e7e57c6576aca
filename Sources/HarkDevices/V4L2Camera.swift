import CV4L2
import Foundation
import HarkCore
import Synchronization

/// A V4L2 camera (`/dev/videoN`) used as a still camera: each `capture()` starts streaming, lets the
/// camera settle, keeps one frame as a JPEG and stops streaming again.
///
/// Streaming only while capturing keeps the camera's light off between pictures, leaves the device free
/// for other programs, and costs about one REQBUFS/STREAMON round trip per picture, which a voice
/// command ("take a picture") does not notice. The descriptor stays open between captures.
///
/// YUYV frames are encoded with `JPEGEncoder` at `quality`. MJPEG frames are already JPEGs: each is
/// decoded once in full to check it (cameras deliver truncated and corrupt frames; a damaged frame is
/// dropped and the next one taken), then stored as the camera compressed it, with the standard Huffman
/// tables inserted when the frame has none (`JPEGHuffmanTables`). Re-encoding would cost a second
/// generation of JPEG loss and ~10 ms for nothing.
public final class V4L2Camera: Camera {
    /// The device path, `/dev/video0`.
    public let name: String
    /// What the caller asked for.
    public let requestedWidth: Int
    public let requestedHeight: Int
    /// What the driver gave (`VIDIOC_S_FMT` picks the nearest size it supports).
    public let width: Int
    public let height: Int
    /// The capture format: YUYV when the device offers it at the requested size, else the camera's JPEG.
    public let pixelFormat: V4L2PixelFormat
    /// The JPEG quality for YUYV frames, 1…100 (MJPEG frames keep the camera's quality).
    public let quality: Int
    /// Frames dropped at the start of each capture while auto-exposure and white balance settle.
    public let warmUpFrames: Int
    /// How long to wait for any one frame before giving up.
    public let frameTimeout: Duration
    /// What the device said about itself when it was opened.
    public let info: V4L2DeviceInfo

    /// Buffers requested per capture: one being filled while another is read, one spare.
    static let bufferCount = 3
    /// Damaged frames (flagged, short, undecodable) tolerated in one capture before it fails.
    static let maximumDamagedFrames = 5

    private let device: Mutex<V4L2Device>
    private let encoder: JPEGEncoder
    private let decoder: JPEGDecoder

    /// Opens `device` and sets its capture format.
    /// - Parameters:
    ///   - width: 16…8192; the driver may give another size (see `width`).
    ///   - height: 16…8192.
    ///   - quality: the JPEG quality for YUYV frames, 1…100.
    ///   - warmUpFrames: frames to drop at the start of each capture, 0…100.
    ///   - frameTimeout: how long to wait for each frame.
    /// The corresponding C calls are `open`, `VIDIOC_QUERYCAP`, `VIDIOC_ENUM_FMT`, `VIDIOC_ENUM_FRAMESIZES`
    /// and `VIDIOC_S_FMT`.
    public convenience init(device: String = "/dev/video0", width: Int, height: Int, quality: Int = 85,
                            warmUpFrames: Int = 5, frameTimeout: Duration = .seconds(5)) throws(CameraError) {
        try self.init(device: device, width: width, height: height, quality: quality, warmUpFrames: warmUpFrames,
                      frameTimeout: frameTimeout, system: LinuxV4L2SystemCalls())
    }

    /// The same with the system calls supplied: tests pass a fake driver.
    init(device path: String, width: Int, height: Int, quality: Int, warmUpFrames: Int, frameTimeout: Duration,
         system: any V4L2SystemCalls) throws(CameraError) {
        try CameraError.checkFrameSize(width: width, height: height, camera: path)
        try JPEGLimits.checkQuality(quality, "V4L2Camera")
        guard (0...100).contains(warmUpFrames) else {
            throw .invalidArgument("V4L2Camera", "\(path): warm-up frames \(warmUpFrames) is out of range: it must be 0…100")
        }
        guard frameTimeout > .zero else {
            throw .invalidArgument("V4L2Camera", "\(path): the frame timeout must be positive, not \(frameTimeout)")
        }
        let device = try V4L2Device(path: path, system: system)
        let info = try device.describe()
        let pixelFormat = try Self.chooseFormat(info, width: width, height: height)
        let format = try device.setFormat(pixelFormat, width: width, height: height)
        encoder = try JPEGEncoder()
        decoder = try JPEGDecoder()
        name = path
        requestedWidth = width
        requestedHeight = height
        self.width = format.width
        self.height = format.height
        self.pixelFormat = pixelFormat
        self.quality = quality
        self.warmUpFrames = warmUpFrames
        self.frameTimeout = frameTimeout
        self.info = info
        self.device = Mutex(device)
    }

    /// Whether the driver gave a different size than the one asked for.
    public var sizeWasAdjusted: Bool { width != requestedWidth || height != requestedHeight }

    /// Captures one frame (after `warmUpFrames`) and returns it as a JPEG.
    /// The corresponding C calls are `VIDIOC_S_FMT`, `VIDIOC_REQBUFS`, `VIDIOC_QUERYBUF`, `mmap`,
    /// `VIDIOC_QBUF`, `VIDIOC_STREAMON`, `poll`, `VIDIOC_DQBUF`, `VIDIOC_STREAMOFF` and `munmap`.
    public func capture() throws(CameraError) -> Picture {
        try device.withLock { (device) throws(CameraError) -> Picture in
            // Another program may have changed the format since the last capture: set it again.
            let format = try device.setFormat(pixelFormat, width: requestedWidth, height: requestedHeight)
            let stream = V4L2Stream(device: device)
            defer { stream.stop() }
            try stream.start(bufferCount: Self.bufferCount)
            var received = 0, damaged = 0
            while true {
                guard let frame = try stream.next(timeout: frameTimeout) else {
                    throw CameraError(function: "poll", code: ETIMEDOUT,
                                      message: "\(name): no frame within \(Self.seconds(frameTimeout)) (after \(received) frame\(received == 1 ? "" : "s")); the camera may be stalled or short of USB bandwidth")
                }
                received += 1
                let capturedAt = Date()
                if received <= warmUpFrames {
                    try stream.requeue(frame)
                    continue
                }
                switch Result(catching: { () throws(CameraError) -> Picture in try picture(frame, format, capturedAt) }) {
                case .success(let picture):
                    return picture
                case .failure(let failure):
                    damaged += 1
                    guard damaged < Self.maximumDamagedFrames else {
                        throw CameraError(function: failure.function, code: failure.code,
                                          message: "\(name): \(damaged) damaged frames in one capture; the last: \(failure.message)")
                    }
                    try stream.requeue(frame)
                }
            }
        }
    }

    /// One frame to a picture, or an error that marks the frame as damaged (the capture then takes the next).
    private func picture(_ frame: V4L2Stream.Frame, _ format: V4L2FrameFormat, _ capturedAt: Date) throws(CameraError) -> Picture {
        guard !frame.damaged else {
            throw CameraError(function: "VIDIOC_DQBUF", code: EIO, message: "the driver flagged the frame as damaged (V4L2_BUF_FLAG_ERROR)")
        }
        let source = "\(name) \(format.pixelFormat)"
        if format.pixelFormat.isJPEG {
            let jpeg = [UInt8](frame.bytes)
            // The size is the JPEG's own: the picture is stored as the camera compressed it.
            let size = try decoder.validate(jpeg)
            return Picture(jpeg: try JPEGHuffmanTables.insertingStandardTables(into: jpeg), width: size.width, height: size.height,
                           capturedAt: capturedAt, source: source)
        }
        // A short frame (bytesused below the image size) is refused by the encoder, naming the sizes.
        let jpeg = try encoder.encodeYUYV(frame.bytes, width: format.width, height: format.height,
                                          bytesPerLine: max(format.bytesPerLine, format.width * 2),
                                          range: format.range, quality: quality)
        return Picture(jpeg: jpeg, width: format.width, height: format.height, capturedAt: capturedAt, source: source)
    }

    /// YUYV when the device offers it at the requested size, else a JPEG format at that size, else
    /// whichever supported format comes first (YUYV, MJPEG, JPEG) and the driver picks the size.
    static func chooseFormat(_ info: V4L2DeviceInfo, width: Int, height: Int) throws(CameraError) -> V4L2PixelFormat {
        guard info.isCaptureDevice else {
            let names = info.capabilityNames.isEmpty ? "none" : info.capabilityNames.joined(separator: ", ")
            let detail = info.capabilities & UInt32(V4L2_CAP_VIDEO_CAPTURE_MPLANE) != 0
                ? "; multi-planar capture (VIDEO_CAPTURE_MPLANE) is not supported" : ""
            throw CameraError(function: "VIDIOC_QUERYCAP", code: ENODEV,
                              message: "\(info.path): not a video capture device (driver \(info.driver), card \"\(info.card)\", capabilities: \(names))\(detail)")
        }
        let usable = V4L2PixelFormat.supported.compactMap { supported in info.formats.first { $0.pixelFormat == supported } }
        guard let fallback = usable.first else {
            let offered = info.formats.isEmpty ? "none" : info.formats.map { "\($0.pixelFormat) (\($0.description))" }.joined(separator: ", ")
            throw CameraError(function: "VIDIOC_ENUM_FMT", code: EINVAL,
                              message: "\(info.path): offers no format Hark can capture (YUYV, MJPEG, JPEG); it offers: \(offered)")
        }
        return (usable.first { $0.offers(width: width, height: height) } ?? fallback).pixelFormat
    }

    private static func seconds(_ duration: Duration) -> String {
        String(format: "%g s", duration.timeInterval)
    }
}
