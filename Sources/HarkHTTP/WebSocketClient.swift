import COpenSSL
import Foundation
import Synchronization

/// A WebSocket (RFC 6455) to another Hark server, over `ClientStream` (TLS with a pinned certificate for
/// `https`). `connect` does the upgrade and returns once the server has accepted it, or throws with the
/// server's status and message (401, 403, 404 …). A thread of its own then reads: messages go to `received`,
/// pings are answered, a close is answered and reported once through `closed` with its code and reason.
/// `send` may be called from any thread.
///
/// The client's frames are masked, as the RFC requires of clients; the server's must not be (a masked one is a
/// protocol error: the socket closes with 1002). Messages over `maximumMessageBytes` close it with 1009.
public final class WebSocketClient: Sendable {
    public enum Message: Sendable, Equatable {
        case text(String)
        case binary([UInt8])
    }

    public static let maximumMessageBytes = 1 << 20

    private let stream: ClientStream
    private let sendLock = Mutex(())
    private let state = Mutex(State())

    struct State {
        var closeSent = false
        var closedReported = false
    }

    /// Upgrades `path` on `address` (the token goes in `Authorization`); on success starts the reading thread.
    /// `received` and `closed` run on that thread; `closed` gets the close code (1006 when the connection just
    /// ended) and the reason.
    public static func connect(
        _ address: ServerAddress, path: String, token: String?, pin: [UInt8]?, timeout: Double = 10,
        received: @escaping @Sendable (Message) -> Void, closed: @escaping @Sendable (Int, String) -> Void
    ) throws(ClientError) -> WebSocketClient {
        let stream = try ClientStream(address, pin: pin, timeout: timeout)
        var keyBytes = [UInt8](repeating: 0, count: 16)
        for i in keyBytes.indices { keyBytes[i] = UInt8.random(in: 0...255) }
        let key = Data(keyBytes).base64EncodedString()
        var head = "GET \(path) HTTP/1.1\r\nHost: \(address.hostHeader)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        head += "Sec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: 13\r\n"
        if let token { head += "Authorization: Bearer \(token)\r\n" }
        head += "\r\n"
        let what = "WebSocket \(path) on \(address)"
        do throws(ClientError) {
            try stream.write(Array(head.utf8))
            var reader = ResponseReader(stream: stream, deadline: Date().addingTimeInterval(timeout), what: what)
            let (status, headers) = try reader.head()
            guard status == 101 else {
                var body: [UInt8] = []
                if let length = headers["content-length"].flatMap({ Int($0) }), length <= 65_536 { body = (try? reader.exactly(length)) ?? [] }
                let answer = HTTPClientResponse(status: status, headers: headers, body: body)
                throw ClientError("\(what) was refused: \(answer.errorMessage) (\(status))", status: status)
            }
            guard headers["sec-websocket-accept"] == acceptValue(for: key) else {
                throw ClientError("\(what): the server's Sec-WebSocket-Accept does not match the key (not a WebSocket server?)")
            }
            let client = WebSocketClient(stream: stream)
            let leftover = reader.buffer
            let thread = Thread { client.readLoop(buffered: leftover, received: received, closed: closed) }
            thread.name = "hark-websocket-client"
            thread.start()
            return client
        } catch {
            stream.close()
            throw error
        }
    }

    private init(stream: ClientStream) {
        self.stream = stream
    }

    /// `Sec-WebSocket-Accept` for a key: base64(SHA-1(key + the RFC's GUID)).
    static func acceptValue(for key: String) -> String {
        let input = Array((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").utf8)
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        EVP_Digest(input, input.count, &digest, &length, EVP_sha1(), nil)
        return Data(digest[0..<Int(length)]).base64EncodedString()
    }

    // MARK: Sending

    public func send(_ message: Message) throws(ClientError) {
        switch message {
        case .text(let text): try send(opcode: 1, Array(text.utf8))
        case .binary(let bytes): try send(opcode: 2, bytes)
        }
    }

    /// Sends a close (once) and shuts the connection after a short wait for the server's.
    public func close(code: Int = 1000, reason: String = "") {
        let first = state.withLock { s in
            defer { s.closeSent = true }
            return !s.closeSent
        }
        if first {
            var payload = [UInt8(code >> 8 & 0xFF), UInt8(code & 0xFF)]
            payload += Array(reason.utf8.prefix(123))
            try? send(opcode: 8, payload, force: true)
        }
        // The reading thread ends when the server answers the close or the stream is shut.
        DispatchQueue.global().asyncAfter(deadline: .now() + 1) { [stream] in stream.close() }
    }

    public var isOpen: Bool { !state.withLock { $0.closeSent || $0.closedReported } }

    private func send(opcode: UInt8, _ payload: [UInt8], force: Bool = false) throws(ClientError) {
        if !force, state.withLock({ $0.closeSent }) { throw ClientError("the WebSocket to \(stream.address) is closing") }
        var frame: [UInt8] = [0x80 | opcode]
        let count = payload.count
        if count < 126 {
            frame.append(0x80 | UInt8(count))
        } else if count <= 0xFFFF {
            frame += [0x80 | 126, UInt8(count >> 8), UInt8(count & 0xFF)]
        } else {
            frame.append(0x80 | 127)
            for shift in stride(from: 56, through: 0, by: -8) { frame.append(UInt8(UInt64(count) >> UInt64(shift) & 0xFF)) }
        }
        let mask = (0..<4).map { _ in UInt8.random(in: 0...255) }
        frame += mask
        frame.reserveCapacity(frame.count + count)
        for (i, byte) in payload.enumerated() { frame.append(byte ^ mask[i & 3]) }
        try sendLock.withLock { _ throws(ClientError) in try stream.write(frame) }
    }

    // MARK: Reading

    private func readLoop(buffered: [UInt8], received: @Sendable (Message) -> Void, closed: @Sendable (Int, String) -> Void) {
        var buffer = buffered
        var message: [UInt8] = []
        var messageOpcode: UInt8 = 0
        var code = 1006
        var reason = "the connection ended"
        reading: while true {
            // Parse every whole frame in the buffer.
            while let (fin, opcode, payload, used) = Self.frame(in: buffer) {
                buffer.removeFirst(used)
                if payload == nil {
                    (code, reason) = (1002, "the server sent a masked or malformed frame")
                    close(code: code, reason: reason)
                    break reading
                }
                let payload = payload!
                switch opcode {
                case 0, 1, 2:
                    if opcode != 0 { messageOpcode = opcode; message = [] }
                    message += payload
                    if message.count > Self.maximumMessageBytes {
                        (code, reason) = (1009, "a message over \(Self.maximumMessageBytes) bytes")
                        close(code: code, reason: reason)
                        break reading
                    }
                    if fin {
                        received(messageOpcode == 1 ? .text(String(decoding: message, as: UTF8.self)) : .binary(message))
                        message = []
                    }
                case 8:
                    code = payload.count >= 2 ? Int(payload[0]) << 8 | Int(payload[1]) : 1005
                    reason = String(decoding: payload.dropFirst(2), as: UTF8.self)
                    close(code: code, reason: reason)
                    break reading
                case 9:
                    try? send(opcode: 10, payload)
                default:
                    break  // pong, or a reserved opcode: nothing to do
                }
            }
            do throws(ClientError) {
                guard let bytes = try stream.read(wait: 1) else { continue }
                if bytes.isEmpty { break reading }
                buffer += bytes
            } catch {
                reason = error.message
                break reading
            }
        }
        stream.close()
        let report = state.withLock { s in
            defer { s.closedReported = true }
            return !s.closedReported
        }
        if report { closed(code, reason) }
    }

    /// One whole frame at the start of `bytes`: FIN, opcode, the payload (nil if masked, which a server must
    /// not do, or with a 64-bit length over the limit) and the bytes it took; nil while incomplete.
    static func frame(in bytes: [UInt8]) -> (Bool, UInt8, [UInt8]?, Int)? {
        guard bytes.count >= 2 else { return nil }
        let fin = bytes[0] & 0x80 != 0
        let opcode = bytes[0] & 0x0F
        let masked = bytes[1] & 0x80 != 0
        var length = Int(bytes[1] & 0x7F)
        var offset = 2
        if length == 126 {
            guard bytes.count >= 4 else { return nil }
            length = Int(bytes[2]) << 8 | Int(bytes[3])
            offset = 4
        } else if length == 127 {
            guard bytes.count >= 10 else { return nil }
            var value: UInt64 = 0
            for i in 2..<10 { value = value << 8 | UInt64(bytes[i]) }
            guard value <= UInt64(maximumMessageBytes) else { return (fin, opcode, nil, bytes.count) }
            length = Int(value)
            offset = 10
        }
        if masked { return (fin, opcode, nil, bytes.count) }
        guard bytes.count >= offset + length else { return nil }
        return (fin, opcode, Array(bytes[offset..<offset + length]), offset + length)
    }
}
