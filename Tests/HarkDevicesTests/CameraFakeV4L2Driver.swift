import CV4L2
import Foundation
@testable import HarkDevices

/// A V4L2 capture driver in memory, behind the same system calls `V4L2Camera` makes, so the capture path
/// (format choice, buffers, streaming, warm-up, damaged frames, timeouts, cleanup) runs without a camera.
/// It answers ioctls the way the V4L2 spec says a driver does; real drivers are exercised in the VM lane.
/// `@unchecked Sendable`: all mutable state is in `state`, touched only under `lock`.
final class FakeV4L2Driver: V4L2SystemCalls, @unchecked Sendable {
    struct Configuration: Sendable {
        var path = "/dev/video0"
        var capabilities = UInt32(V4L2_CAP_VIDEO_CAPTURE) | UInt32(V4L2_CAP_STREAMING)
        var formats: [V4L2PixelFormat] = [.yuyv]
        /// The sizes the driver supports; `S_FMT` snaps to the nearest.
        var sizes: [V4L2DeviceInfo.FrameSize] = [.init(width: 320, height: 240), .init(width: 640, height: 480)]
        var quantization = V4L2_QUANTIZATION_DEFAULT
        /// Extra bytes at the end of each YUYV row (`bytesperline` beyond `width × 2`).
        var rowPadding = 0
        /// `errno` for an ioctl, by request name.
        var failures: [String: Int32] = [:]
        /// `errno` for `open`.
        var openError: Int32?
        /// The contents of frame `n` (0-based) for the negotiated format; nil: no frame arrives.
        var frame: @Sendable (_ sequence: Int, _ format: V4L2FrameFormat) -> (bytes: [UInt8], damaged: Bool)? = { _, _ in nil }
    }

    /// What the driver saw, for assertions.
    struct State {
        var open = false
        var format: V4L2FrameFormat?
        var buffers: [UnsafeMutableRawBufferPointer] = []
        var mapped: Set<Int> = []
        var queued: [Int] = []
        var streaming = false
        var dequeued = 0
        var requests: [String] = []
    }

    let configuration: Configuration
    private let lock = NSLock()
    private var state = State()
    private static let descriptor: Int32 = 42
    private static let pageSize = 4096

    init(_ configuration: Configuration) {
        self.configuration = configuration
    }

    deinit {
        state.buffers.forEach { $0.deallocate() }
    }

    /// A snapshot of what the driver saw.
    func inspect<R>(_ body: (State) -> R) -> R {
        lock.withLock { body(state) }
    }

    func open(_ path: String) -> Int32 {
        if let code = configuration.openError { return -code }
        guard path == configuration.path else { return -ENOENT }
        lock.withLock { state.open = true }
        return Self.descriptor
    }

    func close(_ descriptor: Int32) {
        lock.withLock { state.open = false }
    }

    func videoDevicePaths() -> [String] {
        [configuration.path]
    }

    func mmap(_ descriptor: Int32, length: Int, offset: Int) -> Result<UnsafeMutableRawPointer, V4L2Errno> {
        lock.withLock {
            let index = offset / Self.pageSize
            guard state.buffers.indices.contains(index), length <= state.buffers[index].count,
                  let address = state.buffers[index].baseAddress else { return .failure(V4L2Errno(code: EINVAL)) }
            state.mapped.insert(index)
            return .success(address)
        }
    }

    func munmap(_ address: UnsafeMutableRawPointer, length: Int) {
        lock.withLock {
            if let index = state.buffers.firstIndex(where: { $0.baseAddress == address }) { state.mapped.remove(index) }
        }
    }

    func waitReadable(_ descriptor: Int32, timeoutMilliseconds: Int32) -> Result<Bool, V4L2Errno> {
        lock.withLock {
            guard state.streaming, !state.queued.isEmpty, let format = state.format else { return .success(false) }
            return .success(configuration.frame(state.dequeued, format) != nil)
        }
    }

    func ioctl(_ descriptor: Int32, _ request: V4L2Request, _ argument: UnsafeMutableRawPointer) -> Int32 {
        lock.withLock {
            state.requests.append(request.name)
            if let code = configuration.failures[request.name] { return code }
            switch request {
            case .queryCapability: return queryCapability(argument.assumingMemoryBound(to: v4l2_capability.self))
            case .enumerateFormat: return enumerateFormat(argument.assumingMemoryBound(to: v4l2_fmtdesc.self))
            case .enumerateFrameSizes: return enumerateFrameSizes(argument.assumingMemoryBound(to: v4l2_frmsizeenum.self))
            case .setFormat: return setFormat(argument.assumingMemoryBound(to: v4l2_format.self), &state)
            case .requestBuffers: return requestBuffers(argument.assumingMemoryBound(to: v4l2_requestbuffers.self), &state)
            case .queryBuffer: return queryBuffer(argument.assumingMemoryBound(to: v4l2_buffer.self), state)
            case .queueBuffer: return queueBuffer(argument.assumingMemoryBound(to: v4l2_buffer.self), &state)
            case .dequeueBuffer: return dequeueBuffer(argument.assumingMemoryBound(to: v4l2_buffer.self), &state)
            case .streamOn:
                guard !state.buffers.isEmpty else { return EINVAL }
                state.streaming = true
                return 0
            case .streamOff:
                state.streaming = false
                state.queued = []
                return 0
            default: return ENOTTY
            }
        }
    }

    private func queryCapability(_ capability: UnsafeMutablePointer<v4l2_capability>) -> Int32 {
        capability.pointee = v4l2_capability()
        Self.write("fake", to: &capability.pointee.driver)
        Self.write("Fake Camera", to: &capability.pointee.card)
        Self.write("platform:fake", to: &capability.pointee.bus_info)
        capability.pointee.capabilities = configuration.capabilities | UInt32(V4L2_CAP_DEVICE_CAPS)
        capability.pointee.device_caps = configuration.capabilities
        return 0
    }

    private func enumerateFormat(_ description: UnsafeMutablePointer<v4l2_fmtdesc>) -> Int32 {
        let index = Int(description.pointee.index)
        guard description.pointee.type == V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue,
              configuration.formats.indices.contains(index) else { return EINVAL }
        let format = configuration.formats[index]
        description.pointee.pixelformat = format.rawValue
        Self.write(format == .yuyv ? "YUYV 4:2:2" : "\(format) (fake)", to: &description.pointee.description)
        return 0
    }

    private func enumerateFrameSizes(_ size: UnsafeMutablePointer<v4l2_frmsizeenum>) -> Int32 {
        let index = Int(size.pointee.index)
        guard configuration.formats.contains(V4L2PixelFormat(rawValue: size.pointee.pixel_format)),
              configuration.sizes.indices.contains(index) else { return EINVAL }
        size.pointee.type = V4L2_FRMSIZE_TYPE_DISCRETE.rawValue
        size.pointee.discrete.width = UInt32(configuration.sizes[index].width)
        size.pointee.discrete.height = UInt32(configuration.sizes[index].height)
        return 0
    }

    private func setFormat(_ format: UnsafeMutablePointer<v4l2_format>, _ state: inout State) -> Int32 {
        guard !state.streaming else { return EBUSY }
        let asked = format.pointee.fmt.pix
        var pixelFormat = V4L2PixelFormat(rawValue: asked.pixelformat)
        // Like real drivers, an unknown format is replaced rather than refused.
        if !configuration.formats.contains(pixelFormat), let first = configuration.formats.first { pixelFormat = first }
        let nearest = configuration.sizes.min { a, b in
            abs(a.width - Int(asked.width)) + abs(a.height - Int(asked.height)) < abs(b.width - Int(asked.width)) + abs(b.height - Int(asked.height))
        } ?? .init(width: 640, height: 480)
        let stride = pixelFormat == .yuyv ? nearest.width * 2 + configuration.rowPadding : 0
        let imageSize = pixelFormat == .yuyv ? stride * nearest.height : nearest.width * nearest.height * 2
        format.pointee.fmt.pix.pixelformat = pixelFormat.rawValue
        format.pointee.fmt.pix.width = UInt32(nearest.width)
        format.pointee.fmt.pix.height = UInt32(nearest.height)
        format.pointee.fmt.pix.bytesperline = UInt32(stride)
        format.pointee.fmt.pix.sizeimage = UInt32(imageSize)
        format.pointee.fmt.pix.quantization = configuration.quantization.rawValue
        format.pointee.fmt.pix.colorspace = pixelFormat == .yuyv ? V4L2_COLORSPACE_SRGB.rawValue : V4L2_COLORSPACE_JPEG.rawValue
        state.format = V4L2FrameFormat(pixelFormat: pixelFormat, width: nearest.width, height: nearest.height,
                                       bytesPerLine: stride, imageSize: imageSize,
                                       range: configuration.quantization == V4L2_QUANTIZATION_FULL_RANGE ? .full : .limited)
        return 0
    }

    private func requestBuffers(_ request: UnsafeMutablePointer<v4l2_requestbuffers>, _ state: inout State) -> Int32 {
        guard request.pointee.memory == V4L2_MEMORY_MMAP.rawValue else { return EINVAL }
        guard !state.streaming, state.mapped.isEmpty else { return EBUSY }
        state.buffers.forEach { $0.deallocate() }
        state.buffers = []
        guard request.pointee.count > 0 else { return 0 }
        guard let format = state.format else { return EINVAL }
        let count = min(Int(request.pointee.count), 4)
        state.buffers = (0..<count).map { _ in .allocate(byteCount: format.imageSize, alignment: 16) }
        request.pointee.count = UInt32(count)
        return 0
    }

    private func queryBuffer(_ buffer: UnsafeMutablePointer<v4l2_buffer>, _ state: State) -> Int32 {
        let index = Int(buffer.pointee.index)
        guard state.buffers.indices.contains(index) else { return EINVAL }
        buffer.pointee.length = UInt32(state.buffers[index].count)
        buffer.pointee.m.offset = UInt32(index * Self.pageSize)
        return 0
    }

    private func queueBuffer(_ buffer: UnsafeMutablePointer<v4l2_buffer>, _ state: inout State) -> Int32 {
        let index = Int(buffer.pointee.index)
        guard state.buffers.indices.contains(index), !state.queued.contains(index) else { return EINVAL }
        state.queued.append(index)
        return 0
    }

    private func dequeueBuffer(_ buffer: UnsafeMutablePointer<v4l2_buffer>, _ state: inout State) -> Int32 {
        guard state.streaming, !state.queued.isEmpty, let format = state.format else { return EINVAL }
        guard let frame = configuration.frame(state.dequeued, format) else { return EAGAIN }
        let index = state.queued.removeFirst()
        let storage = state.buffers[index]
        let count = min(frame.bytes.count, storage.count)
        frame.bytes.withUnsafeBytes { storage.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0.prefix(count))) }
        state.dequeued += 1
        buffer.pointee.index = UInt32(index)
        buffer.pointee.bytesused = UInt32(count)
        buffer.pointee.flags = frame.damaged ? UInt32(V4L2_BUF_FLAG_ERROR) : 0
        buffer.pointee.sequence = UInt32(state.dequeued - 1)
        return 0
    }

    /// Copies `text` into a fixed-size C `char` array, NUL-terminated.
    private static func write<Tuple>(_ text: String, to tuple: inout Tuple) {
        withUnsafeMutableBytes(of: &tuple) { bytes in
            bytes.initializeMemory(as: UInt8.self, repeating: 0)
            for (index, byte) in text.utf8.prefix(bytes.count - 1).enumerated() { bytes[index] = byte }
        }
    }
}
