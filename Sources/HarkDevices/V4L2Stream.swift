import CV4L2
import Foundation

/// One streaming session on a `V4L2Device`: memory-mapped buffers requested, queued and streaming.
///
/// `start` sets everything up; `deinit` undoes whatever was set up (`VIDIOC_STREAMOFF`, `munmap`,
/// `VIDIOC_REQBUFS` with a count of 0 so the driver frees its buffers), so a failure halfway through
/// `start` or a capture leaves the device as it was.
final class V4L2Stream {
    /// A dequeued frame, valid until it is requeued or the stream ends.
    struct Frame {
        var index: Int
        var bytes: UnsafeRawBufferPointer
        /// The driver flagged the frame as damaged (`V4L2_BUF_FLAG_ERROR`).
        var damaged: Bool
    }

    private let device: V4L2Device
    private var mappings: [(address: UnsafeMutableRawPointer, length: Int)] = []
    private var requested = false
    private var streaming = false

    init(device: V4L2Device) {
        self.device = device
    }

    deinit {
        stop()
    }

    /// Requests `count` mmap buffers (the driver may grant more or fewer, at least 1), maps and queues
    /// them, and starts streaming.
    /// The corresponding C calls are `VIDIOC_REQBUFS`, `VIDIOC_QUERYBUF`, `mmap`, `VIDIOC_QBUF`, `VIDIOC_STREAMON`.
    func start(bufferCount count: Int) throws(CameraError) {
        var request = v4l2_requestbuffers()
        request.count = UInt32(count)
        request.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        request.memory = V4L2_MEMORY_MMAP.rawValue
        try device.check(.requestBuffers, &request)
        requested = true
        guard request.count > 0 else {
            throw CameraError(function: V4L2Request.requestBuffers.name, code: ENOMEM,
                              message: "\(device.path): the driver granted no capture buffers (VIDIOC_REQBUFS)")
        }
        for index in 0..<request.count {
            var buffer = Self.buffer(index: index)
            try device.check(.queryBuffer, &buffer)
            let length = Int(buffer.length)
            switch device.system.mmap(device.descriptor, length: length, offset: Int(buffer.m.offset)) {
            case .success(let address): mappings.append((address, length))
            case .failure(let failure): throw device.error("mmap", code: failure.code)
            }
        }
        for index in 0..<request.count {
            var buffer = Self.buffer(index: index)
            try device.check(.queueBuffer, &buffer)
        }
        var type = Int32(V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue)
        try device.check(.streamOn, &type)
        streaming = true
    }

    /// Waits up to `timeout` for a frame and dequeues it. The corresponding C calls are `poll` and `VIDIOC_DQBUF`.
    func next(timeout: Duration) throws(CameraError) -> Frame? {
        let deadline = ContinuousClock.now + timeout
        while true {
            let remaining = deadline - ContinuousClock.now
            guard remaining > .zero else { return nil }
            switch device.system.waitReadable(device.descriptor, timeoutMilliseconds: Self.milliseconds(remaining)) {
            case .failure(let failure): throw device.error("poll", code: failure.code)
            case .success(false): return nil
            case .success(true): break
            }
            var buffer = Self.buffer(index: 0)
            let code = device.perform(.dequeueBuffer, &buffer)
            // Readable but nothing to take (a spurious wakeup): wait again.
            if code == EAGAIN { continue }
            guard code == 0 else { throw device.error(V4L2Request.dequeueBuffer.name, code: code) }
            let index = Int(buffer.index)
            guard mappings.indices.contains(index) else {
                throw CameraError(function: V4L2Request.dequeueBuffer.name, code: EINVAL,
                                  message: "\(device.path): the driver returned buffer \(index), but only \(mappings.count) are mapped")
            }
            let used = min(Int(buffer.bytesused), mappings[index].length)
            return Frame(index: index, bytes: UnsafeRawBufferPointer(start: mappings[index].address, count: used),
                         damaged: buffer.flags & UInt32(V4L2_BUF_FLAG_ERROR) != 0)
        }
    }

    /// Gives a frame's buffer back to the driver. The corresponding C call is `VIDIOC_QBUF`.
    func requeue(_ frame: Frame) throws(CameraError) {
        var buffer = Self.buffer(index: UInt32(frame.index))
        try device.check(.queueBuffer, &buffer)
    }

    /// Stops streaming and releases the buffers; safe to call more than once. Failures here are not
    /// reported: the picture (or the error that ended the capture) is what the caller needs.
    func stop() {
        if streaming {
            var type = Int32(V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue)
            _ = device.perform(.streamOff, &type)
            streaming = false
        }
        for mapping in mappings {
            device.system.munmap(mapping.address, length: mapping.length)
        }
        mappings = []
        if requested {
            var request = v4l2_requestbuffers()
            request.count = 0
            request.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
            request.memory = V4L2_MEMORY_MMAP.rawValue
            _ = device.perform(.requestBuffers, &request)
            requested = false
        }
    }

    private static func buffer(index: UInt32) -> v4l2_buffer {
        var buffer = v4l2_buffer()
        buffer.index = index
        buffer.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        buffer.memory = V4L2_MEMORY_MMAP.rawValue
        return buffer
    }

    /// `poll`'s timeout: whole milliseconds, rounded up so a short remainder still waits.
    private static func milliseconds(_ duration: Duration) -> Int32 {
        let (seconds, attoseconds) = duration.components
        let total = seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return Int32(clamping: total)
    }
}
