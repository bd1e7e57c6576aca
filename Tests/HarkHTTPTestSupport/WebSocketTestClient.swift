import Foundation

/// A minimal RFC 6455 client over a `TestByteStream`: masked frames out, fragmented messages and control
/// frames in. Enough to test the server, not a general client.
package final class WebSocketTestClient {
    package enum Message: Equatable {
        case text(String)
        case binary([UInt8])
        /// The close frame's status code (nil when it carried none).
        case close(UInt16?)
    }

    package let http: HTTPTestClient
    private var buffered: [UInt8] = []

    /// Connects and upgrades; throws with the status when the server answers something other than 101.
    package init(stream: TestByteStream, path: String, headers: [String: String] = [:]) throws {
        http = HTTPTestClient(stream: stream)
        let key = Data((0..<16).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
        var all = ["Upgrade": "websocket", "Connection": "Upgrade", "Sec-WebSocket-Key": key,
                   "Sec-WebSocket-Version": "13"]
        all.merge(headers) { _, new in new }
        try http.send(method: "GET", path: path, headers: all)
        let response = try http.readResponse(expectBody: false)
        guard response.status == 101 else {
            throw WebSocketRefused(response: try Self.withBody(response, http))
        }
        buffered = http.takeBuffered()
    }

    package convenience init(port: Int, path: String, headers: [String: String] = [:], timeout: TimeInterval = 5, source: String? = nil) throws {
        try self.init(stream: try PlainTestStream(port: port, timeout: timeout, source: source), path: path, headers: headers)
    }

    /// The refusal's body, read now that we know it is not a 101.
    private static func withBody(_ response: TestResponse, _ http: HTTPTestClient) throws -> TestResponse {
        var response = response
        let length = Int(response.headers["content-length"] ?? "0") ?? 0
        var body = http.takeBuffered()
        while body.count < length {
            let more = try http.stream.read(max: 65536)
            if more.isEmpty { break }
            body += more
        }
        response.body = Array(body.prefix(length))
        return response
    }

    package func send(text: String) throws { try sendFrame(opcode: 1, payload: Array(text.utf8)) }
    package func send(binary: [UInt8]) throws { try sendFrame(opcode: 2, payload: binary) }
    package func sendClose(code: UInt16 = 1000) throws { try sendFrame(opcode: 8, payload: [UInt8(code >> 8), UInt8(code & 0xff)]) }

    /// Sends one message in `pieces` fragments (first with the opcode, then continuations).
    package func sendFragmented(text: String, pieces: Int) throws {
        let bytes = Array(text.utf8)
        let size = max(1, (bytes.count + pieces - 1) / pieces)
        var offset = 0
        var first = true
        repeat {
            let end = min(bytes.count, offset + size)
            try sendFrame(opcode: first ? 1 : 0, payload: Array(bytes[offset..<end]), final: end == bytes.count)
            first = false
            offset = end
        } while offset < bytes.count
    }

    package func sendFrame(opcode: UInt8, payload: [UInt8], final: Bool = true) throws {
        var frame: [UInt8] = [(final ? 0x80 : 0) | opcode]
        if payload.count < 126 {
            frame.append(0x80 | UInt8(payload.count))
        } else if payload.count <= 0xffff {
            frame += [UInt8(0x80 | 126), UInt8(payload.count >> 8), UInt8(payload.count & 0xff)]
        } else {
            frame.append(0x80 | 127)
            for shift in stride(from: 56, through: 0, by: -8) { frame.append(UInt8((payload.count >> shift) & 0xff)) }
        }
        let mask = (0..<4).map { _ in UInt8.random(in: 0...255) }
        frame += mask
        frame += payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
        try http.stream.write(frame)
    }

    /// The next whole message (fragments joined); pings are answered, pongs skipped.
    package func receive() throws -> Message {
        var message: [UInt8] = []
        var messageOpcode: UInt8 = 0
        while true {
            let (final, opcode, payload) = try readFrame()
            switch opcode {
            case 8:
                return .close(payload.count >= 2 ? UInt16(payload[0]) << 8 | UInt16(payload[1]) : nil)
            case 9:
                try sendFrame(opcode: 10, payload: payload)
                continue
            case 10:
                continue
            case 0:
                message += payload
            default:
                messageOpcode = opcode
                message = payload
            }
            if final {
                return messageOpcode == 2 ? .binary(message) : .text(String(decoding: message, as: UTF8.self))
            }
        }
    }

    /// How many frames have been read (a fragmented message counts each fragment).
    package private(set) var framesRead = 0

    private func readFrame() throws -> (Bool, UInt8, [UInt8]) {
        try fill(2)
        let final = buffered[0] & 0x80 != 0
        let opcode = buffered[0] & 0x0f
        var length = Int(buffered[1] & 0x7f)
        var header = 2
        if length == 126 {
            try fill(4)
            length = Int(buffered[2]) << 8 | Int(buffered[3])
            header = 4
        } else if length == 127 {
            try fill(10)
            length = buffered[2..<10].reduce(0) { $0 << 8 | Int($1) }
            header = 10
        }
        try fill(header + length)
        let payload = Array(buffered[header..<(header + length)])
        buffered.removeFirst(header + length)
        framesRead += 1
        return (final, opcode, payload)
    }

    private func fill(_ count: Int) throws {
        while buffered.count < count {
            let more = try http.stream.read(max: 65536)
            if more.isEmpty { throw TestClientError(description: "connection closed mid-frame") }
            buffered += more
        }
    }
}

/// The server answered an upgrade with this instead of 101.
package struct WebSocketRefused: Error {
    package var response: TestResponse
}
