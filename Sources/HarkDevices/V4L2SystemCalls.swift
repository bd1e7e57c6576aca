import CV4L2
import Foundation

/// A V4L2 ioctl request: its number (from CV4L2, where the `_IOWR` macros are expanded) and its name
/// for error messages.
struct V4L2Request: Hashable, Sendable, CustomStringConvertible {
    let number: UInt
    let name: String

    var description: String { name }

    static let queryCapability = V4L2Request(number: CV4L2_VIDIOC_QUERYCAP, name: "VIDIOC_QUERYCAP")
    static let enumerateFormat = V4L2Request(number: CV4L2_VIDIOC_ENUM_FMT, name: "VIDIOC_ENUM_FMT")
    static let enumerateFrameSizes = V4L2Request(number: CV4L2_VIDIOC_ENUM_FRAMESIZES, name: "VIDIOC_ENUM_FRAMESIZES")
    static let getFormat = V4L2Request(number: CV4L2_VIDIOC_G_FMT, name: "VIDIOC_G_FMT")
    static let setFormat = V4L2Request(number: CV4L2_VIDIOC_S_FMT, name: "VIDIOC_S_FMT")
    static let requestBuffers = V4L2Request(number: CV4L2_VIDIOC_REQBUFS, name: "VIDIOC_REQBUFS")
    static let queryBuffer = V4L2Request(number: CV4L2_VIDIOC_QUERYBUF, name: "VIDIOC_QUERYBUF")
    static let queueBuffer = V4L2Request(number: CV4L2_VIDIOC_QBUF, name: "VIDIOC_QBUF")
    static let dequeueBuffer = V4L2Request(number: CV4L2_VIDIOC_DQBUF, name: "VIDIOC_DQBUF")
    static let streamOn = V4L2Request(number: CV4L2_VIDIOC_STREAMON, name: "VIDIOC_STREAMON")
    static let streamOff = V4L2Request(number: CV4L2_VIDIOC_STREAMOFF, name: "VIDIOC_STREAMOFF")
}

/// The system calls the V4L2 code makes, one function each, so tests can stand in a fake driver
/// (there is no camera on the build machines; `vivid` runs in the VM lane).
/// Failures come back as `errno` values, never as a global to read later.
protocol V4L2SystemCalls: Sendable {
    /// `open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC)`: the descriptor, or `-errno`.
    func open(_ path: String) -> Int32
    /// `close(2)`.
    func close(_ descriptor: Int32)
    /// `ioctl(2)` through `cv4l2_ioctl`, retried on `EINTR`: 0, or `errno`.
    func ioctl(_ descriptor: Int32, _ request: V4L2Request, _ argument: UnsafeMutableRawPointer) -> Int32
    /// `mmap(NULL, length, PROT_READ | PROT_WRITE, MAP_SHARED, descriptor, offset)`: the mapping, or `errno`.
    func mmap(_ descriptor: Int32, length: Int, offset: Int) -> Result<UnsafeMutableRawPointer, V4L2Errno>
    /// `munmap(2)`.
    func munmap(_ address: UnsafeMutableRawPointer, length: Int)
    /// `poll(2)` for `POLLIN` on one descriptor: true when readable, false on timeout, or `errno`.
    func waitReadable(_ descriptor: Int32, timeoutMilliseconds: Int32) -> Result<Bool, V4L2Errno>
    /// The `/dev/video*` paths that exist, in numeric order.
    func videoDevicePaths() -> [String]
}

/// An `errno` value as an `Error`, for the `Result`s of `V4L2SystemCalls`.
struct V4L2Errno: Error, Equatable {
    let code: Int32
}

/// The real system calls.
struct LinuxV4L2SystemCalls: V4L2SystemCalls {
    func open(_ path: String) -> Int32 {
        let descriptor = Glibc.open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC)
        return descriptor >= 0 ? descriptor : -errno
    }

    func close(_ descriptor: Int32) {
        _ = Glibc.close(descriptor)
    }

    func ioctl(_ descriptor: Int32, _ request: V4L2Request, _ argument: UnsafeMutableRawPointer) -> Int32 {
        while true {
            if cv4l2_ioctl(descriptor, request.number, argument) == 0 { return 0 }
            if errno != EINTR { return errno }
        }
    }

    func mmap(_ descriptor: Int32, length: Int, offset: Int) -> Result<UnsafeMutableRawPointer, V4L2Errno> {
        let address = Glibc.mmap(nil, length, PROT_READ | PROT_WRITE, MAP_SHARED, descriptor, off_t(offset))
        // MAP_FAILED is `(void *) -1`, a macro Swift cannot import.
        guard let address, address != UnsafeMutableRawPointer(bitPattern: -1) else { return .failure(V4L2Errno(code: errno)) }
        return .success(address)
    }

    func munmap(_ address: UnsafeMutableRawPointer, length: Int) {
        _ = Glibc.munmap(address, length)
    }

    func waitReadable(_ descriptor: Int32, timeoutMilliseconds: Int32) -> Result<Bool, V4L2Errno> {
        var request = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        while true {
            let ready = Glibc.poll(&request, 1, timeoutMilliseconds)
            if ready > 0 { return .success(true) }
            if ready == 0 { return .success(false) }
            if errno != EINTR { return .failure(V4L2Errno(code: errno)) }
        }
    }

    func videoDevicePaths() -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/dev")) ?? []
        return names.compactMap { name -> (Int, String)? in
            guard name.hasPrefix("video"), let number = Int(name.dropFirst("video".count)) else { return nil }
            return (number, "/dev/\(name)")
        }.sorted { $0.0 < $1.0 }.map(\.1)
    }
}
