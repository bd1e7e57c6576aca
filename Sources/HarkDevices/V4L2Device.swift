import CV4L2
import Foundation

/// An open `/dev/videoN` node: the descriptor (closed in `deinit`) and the ioctls Hark uses, each turning
/// `errno` into a `CameraError` that names the device and the request.
///
/// Not thread-safe: `V4L2Camera` keeps it behind its lock, `V4L2Devices.list()` uses it on one thread.
final class V4L2Device {
    let path: String
    let system: any V4L2SystemCalls
    let descriptor: Int32

    /// Opens `path` read-write and non-blocking (frames are waited for with `poll`, so a stalled camera
    /// times out instead of hanging). The corresponding C function is `open`.
    init(path: String, system: any V4L2SystemCalls) throws(CameraError) {
        let result = system.open(path)
        guard result >= 0 else { throw Self.openError(path, code: -result, system: system) }
        self.path = path
        self.system = system
        descriptor = result
    }

    deinit {
        system.close(descriptor)
    }

    /// Runs one ioctl on `value`, returning 0 or `errno`.
    func perform<Value>(_ request: V4L2Request, _ value: inout Value) -> Int32 {
        withUnsafeMutablePointer(to: &value) { system.ioctl(descriptor, request, $0) }
    }

    /// Runs one ioctl on `value` and throws its failure.
    func check<Value>(_ request: V4L2Request, _ value: inout Value) throws(CameraError) {
        let code = perform(request, &value)
        guard code == 0 else { throw error(request.name, code: code) }
    }

    /// A failed call on this device, with the meanings a user can act on spelled out.
    func error(_ function: String, code: Int32) -> CameraError {
        switch code {
        case EBUSY: .system(function, device: path, code: code, problem: "in use by another program")
        case ENODEV, ENXIO: .system(function, device: path, code: code, problem: "the device is gone (unplugged?)")
        default: .system(function, device: path, code: code)
        }
    }

    /// The node's identity, capabilities and formats. Fails with "not a video capture device" when the
    /// node does not answer `VIDIOC_QUERYCAP` (a regular file, `/dev/null`, a non-V4L2 device).
    func describe() throws(CameraError) -> V4L2DeviceInfo {
        var capability = v4l2_capability()
        let code = perform(.queryCapability, &capability)
        guard code == 0 else {
            if code == ENOTTY || code == EINVAL {
                throw .system(V4L2Request.queryCapability.name, device: path, code: code, problem: "not a video capture device")
            }
            throw error(V4L2Request.queryCapability.name, code: code)
        }
        let capabilities = capability.capabilities & UInt32(V4L2_CAP_DEVICE_CAPS) != 0
            ? capability.device_caps : capability.capabilities
        var info = V4L2DeviceInfo(path: path, card: Self.string(capability.card), driver: Self.string(capability.driver),
                                  bus: Self.string(capability.bus_info), capabilities: capabilities)
        if capabilities & UInt32(V4L2_CAP_VIDEO_CAPTURE) != 0 {
            info.formats = try formats()
        }
        return info
    }

    /// `VIDIOC_ENUM_FMT` for single-planar capture until the driver answers `EINVAL`, with the frame
    /// sizes of each format.
    func formats() throws(CameraError) -> [V4L2DeviceInfo.Format] {
        var formats: [V4L2DeviceInfo.Format] = []
        for index in 0..<UInt32(64) {
            var description = v4l2_fmtdesc()
            description.index = index
            description.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
            let code = perform(.enumerateFormat, &description)
            if code == EINVAL { break }
            guard code == 0 else { throw error(V4L2Request.enumerateFormat.name, code: code) }
            let pixelFormat = V4L2PixelFormat(rawValue: description.pixelformat)
            var format = V4L2DeviceInfo.Format(pixelFormat: pixelFormat, description: Self.string(description.description))
            (format.sizes, format.sizeRange) = frameSizes(pixelFormat)
            formats.append(format)
        }
        return formats
    }

    /// `VIDIOC_ENUM_FRAMESIZES`: discrete sizes or one range. Drivers need not implement it, so a failure
    /// means "not listed", not an error.
    func frameSizes(_ pixelFormat: V4L2PixelFormat) -> ([V4L2DeviceInfo.FrameSize], V4L2DeviceInfo.SizeRange?) {
        var sizes: [V4L2DeviceInfo.FrameSize] = []
        for index in 0..<UInt32(256) {
            var size = v4l2_frmsizeenum()
            size.index = index
            size.pixel_format = pixelFormat.rawValue
            guard perform(.enumerateFrameSizes, &size) == 0 else { break }
            if size.type == V4L2_FRMSIZE_TYPE_DISCRETE.rawValue {
                sizes.append(.init(width: Int(size.discrete.width), height: Int(size.discrete.height)))
            } else {
                let range = size.stepwise
                return ([], .init(minimum: .init(width: Int(range.min_width), height: Int(range.min_height)),
                                  maximum: .init(width: Int(range.max_width), height: Int(range.max_height)),
                                  step: .init(width: Int(range.step_width), height: Int(range.step_height))))
            }
        }
        return (sizes, nil)
    }

    /// `VIDIOC_S_FMT`: asks for `pixelFormat` at `width × height`, progressive. Returns what the driver
    /// set, which may be another size (drivers pick the nearest they support).
    func setFormat(_ pixelFormat: V4L2PixelFormat, width: Int, height: Int) throws(CameraError) -> V4L2FrameFormat {
        var format = v4l2_format()
        format.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        format.fmt.pix.pixelformat = pixelFormat.rawValue
        format.fmt.pix.width = UInt32(width)
        format.fmt.pix.height = UInt32(height)
        format.fmt.pix.field = V4L2_FIELD_NONE.rawValue
        try check(.setFormat, &format)
        let pix = format.fmt.pix
        guard pix.pixelformat == pixelFormat.rawValue else {
            throw CameraError(function: V4L2Request.setFormat.name, code: EINVAL,
                              message: "\(path): asked for \(pixelFormat) frames, the driver set \(V4L2PixelFormat(rawValue: pix.pixelformat)) instead")
        }
        let limited: Bool = switch pix.quantization {
        case UInt32(V4L2_QUANTIZATION_FULL_RANGE.rawValue): false
        case UInt32(V4L2_QUANTIZATION_LIM_RANGE.rawValue): true
        // V4L2's default for Y'CbCr is limited range, except in the JPEG colourspace.
        default: pix.colorspace != V4L2_COLORSPACE_JPEG.rawValue
        }
        return V4L2FrameFormat(pixelFormat: pixelFormat, width: Int(pix.width), height: Int(pix.height),
                               bytesPerLine: Int(pix.bytesperline), imageSize: Int(pix.sizeimage),
                               range: limited ? .limited : .full)
    }

    /// A fixed-size C `char` array (a tuple in Swift) up to its first NUL, as UTF-8.
    static func string<Tuple>(_ tuple: Tuple) -> String {
        withUnsafeBytes(of: tuple) { bytes in
            String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
        }
    }

    /// Why `open` failed, in the words a user needs: a missing node lists the ones that exist.
    private static func openError(_ path: String, code: Int32, system: any V4L2SystemCalls) -> CameraError {
        switch code {
        case ENOENT:
            let existing = system.videoDevicePaths()
            let hint = existing.isEmpty ? "there are no /dev/video* devices on this machine"
                : "existing: \(existing.joined(separator: ", "))"
            return CameraError(function: "open", code: code, message: "\(path): no such device (\(hint))")
        case EACCES, EPERM:
            return .system("open", device: path, code: code, problem: "permission denied (is the user in the video group?)")
        case EBUSY:
            return .system("open", device: path, code: code, problem: "in use by another program")
        case EISDIR:
            return .system("open", device: path, code: code, problem: "not a video capture device")
        case ENODEV, ENXIO:
            return .system("open", device: path, code: code, problem: "the device is gone (unplugged?)")
        default:
            return .system("open", device: path, code: code)
        }
    }
}
