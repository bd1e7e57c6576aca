import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Why the server could not start: the address, the C function and the system's reason.
public struct WyomingServerError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}

/// The Wyoming server: a TCP listener and one thread per client, each running a `WyomingSession` over a
/// `WyomingFrameReader`. Plain POSIX sockets: the protocol is a byte stream, not HTTP, so libwebsockets has
/// nothing to offer it. A client that breaks the framing gets an error event and is closed; one that
/// vanishes mid-stream has its decoders given back; one over `limits.connections` is told so and closed.
public final class WyomingServer: Sendable {
    /// The address actually bound (the real port when 0 was asked for).
    public let address: WyomingAddress
    public let services: WyomingServices
    public let limits: WyomingLimits
    private let listener: Int32
    private let log: @Sendable (String) -> Void
    private let state = Mutex(State())
    private let finished = DispatchSemaphore(value: 0)

    private struct State {
        var clients: Set<Int32> = []
        var stopped = false
        var served = 0
    }

    /// Binds `address` and starts accepting clients on a thread of its own. `log` gets one line per client
    /// that broke the protocol or went away mid-stream.
    public init(address: WyomingAddress, services: WyomingServices, limits: WyomingLimits = WyomingLimits(),
                log: @escaping @Sendable (String) -> Void = { _ in }) throws(WyomingServerError) {
        self.services = services
        self.limits = limits
        self.log = log
        (listener, self.address) = try Self.listen(address)
        let thread = Thread { [self] in acceptLoop() }
        thread.name = "wyoming accept"
        thread.start()
    }

    /// Clients connected now.
    public var connections: Int { state.withLock { $0.clients.count } }

    /// Stops accepting, disconnects every client (their sessions give back what they borrowed) and returns
    /// once the listener is closed.
    public func stop() {
        let clients: Set<Int32>? = state.withLock { s in
            if s.stopped { return nil }
            s.stopped = true
            return s.clients
        }
        guard let clients else { return }
        for fd in clients { shutdown(fd, Int32(SHUT_RDWR)) }
        shutdown(listener, Int32(SHUT_RDWR))
        finished.wait()
    }

    // MARK: - Listening

    private static func listen(_ address: WyomingAddress) throws(WyomingServerError) -> (Int32, WyomingAddress) {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV
        var found: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(address.host, String(address.port), &hints, &found)
        guard status == 0, let first = found else {
            throw WyomingServerError(message: "\(address): cannot resolve \"\(address.host)\": \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(first) }
        var reason = "no address"
        var candidate: UnsafeMutablePointer<addrinfo>? = first
        while let info = candidate {
            candidate = info.pointee.ai_next
            let fd = socket(info.pointee.ai_family, info.pointee.ai_socktype, info.pointee.ai_protocol)
            guard fd >= 0 else { reason = "socket: \(Self.lastError())"; continue }
            var on: Int32 = 1
            setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
            guard bind(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 else {
                reason = "bind: \(Self.lastError())"
                close(fd)
                continue
            }
            guard Glibc.listen(fd, 128) == 0 else {
                reason = "listen: \(Self.lastError())"
                close(fd)
                continue
            }
            return (fd, WyomingAddress(host: address.host, port: boundPort(fd) ?? address.port))
        }
        throw WyomingServerError(message: "\(address): \(reason)")
    }

    private static func boundPort(_ fd: Int32) -> Int? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let ok = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) == 0 }
        }
        guard ok else { return nil }
        let family = Int32(storage.ss_family)
        return withUnsafePointer(to: &storage) { pointer -> Int? in
            switch family {
            case AF_INET: pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin_port)) }
            case AF_INET6: pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin6_port)) }
            default: nil
            }
        }
    }

    static func lastError() -> String { String(cString: strerror(errno)) }

    private func acceptLoop() {
        defer {
            close(listener)
            finished.signal()
        }
        while true {
            let fd = accept(listener, nil, nil)
            if fd < 0 {
                if state.withLock({ $0.stopped }) { return }
                if errno == EINTR || errno == ECONNABORTED { continue }
                // Out of descriptors (EMFILE) or memory: wait for clients to leave rather than spin or quit.
                log("wyoming: accept: \(Self.lastError())")
                usleep(50_000)
                continue
            }
            let admitted: Bool = state.withLock { s in
                guard !s.stopped, s.clients.count < limits.connections else { return false }
                s.clients.insert(fd)
                s.served += 1
                return true
            }
            guard admitted else {
                Self.setTimeout(fd, SO_SNDTIMEO, 1)
                try? Self.write(fd, WyomingEvent.error(
                    "too many clients: this server serves \(limits.connections) at once; try again later", code: "too-many-clients").encoded())
                close(fd)
                continue
            }
            let thread = Thread { [self] in serve(fd) }
            thread.name = "wyoming client"
            // PocketSphinx and eSpeak NG run on this thread, and nothing Hark controls bounds their stack use:
            // the main thread's 8 MiB rather than a secondary thread's smaller default (virtual, so cheap).
            thread.stackSize = 8 << 20
            thread.start()
        }
    }

    // MARK: - One client

    private static func setTimeout(_ fd: Int32, _ option: Int32, _ seconds: TimeInterval) {
        var value = timeval(tv_sec: Int(seconds), tv_usec: Int((seconds - seconds.rounded(.down)) * 1_000_000))
        setsockopt(fd, SOL_SOCKET, option, &value, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Writes all of `bytes`; the client is gone when it cannot be written to (closed, or not reading for
    /// `SO_SNDTIMEO`).
    static func write(_ fd: Int32, _ bytes: [UInt8]) throws(WyomingClientGone) {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes { send(fd, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL)) }
            if sent < 0 {
                if errno == EINTR { continue }
                throw WyomingClientGone(reason: errno == EAGAIN || errno == EWOULDBLOCK ? "stopped reading" : "write: \(lastError())")
            }
            offset += sent
        }
    }

    private func serve(_ fd: Int32) {
        Self.setTimeout(fd, SO_RCVTIMEO, limits.idleTimeout)
        Self.setTimeout(fd, SO_SNDTIMEO, limits.sendTimeout)
        var on: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
        // Partial transcripts are sent from a worker thread: one event's bytes must never interleave another's.
        let writing = NSLock()
        let session = WyomingSession(services: services, limits: limits) { event throws(WyomingClientGone) in
            let bytes = event.encoded()
            writing.lock()
            defer { writing.unlock() }
            try Self.write(fd, bytes)
        }
        defer {
            // The decoders a stream held go back to the pools before the next client can want them.
            session.close()
            state.withLock { _ = $0.clients.remove(fd) }
            close(fd)
        }
        var reader = WyomingFrameReader(limits: limits)
        session.inputWaiting = {
            var pending: Int32 = 0
            return reader.bufferedBytes > 0 || (ioctl(fd, UInt(FIONREAD), &pending) == 0 && pending > 0)
        }
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let received = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if received == 0 {
                if !reader.isAtEventBoundary { log("wyoming: a client went away in the middle of an event (\(reader.bufferedBytes) bytes unread)") }
                return
            }
            if received < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN || errno == EWOULDBLOCK {
                    try? Self.write(fd, WyomingEvent.error("idle for \(Int(limits.idleTimeout)) s: closing the connection", code: "idle-timeout").encoded())
                }
                return
            }
            reader.append(chunk[0..<received])
            do {
                while let event = try reader.next() {
                    try session.handle(event)
                }
            } catch let error as WyomingProtocolError {
                log("wyoming: a client broke the protocol: \(error)")
                do { try Self.write(fd, WyomingEvent.error(error.description, code: error.code).encoded()) } catch { return }
                if error.isFatal { return }
            } catch {
                // The client is gone (a write failed).
                return
            }
        }
    }
}
