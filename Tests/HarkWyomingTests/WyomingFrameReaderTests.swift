import Foundation
import HarkCore
import Testing

@testable import HarkWyoming

/// The framing of `wyoming/event.py`: a JSON header line, `data_length` bytes of JSON data merged over the
/// header's `data`, `payload_length` bytes of payload; and the limits checked before anything is buffered.
@Suite("Wyoming framing")
struct WyomingFrameReaderTests {
    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    static func events(_ stream: [UInt8], cut: Int, limits: WyomingLimits = WyomingLimits()) throws -> [WyomingEvent] {
        var reader = WyomingFrameReader(limits: limits)
        var out: [WyomingEvent] = []
        var offset = 0
        while offset < stream.count {
            let end = min(stream.count, offset + cut)
            reader.append(stream[offset..<end])
            while let event = try reader.next() { out.append(event) }
            offset = end
        }
        #expect(reader.isAtEventBoundary)
        return out
    }

    static let sample: [WyomingEvent] = [
        WyomingEvent("describe"),
        WyomingEvent("recognize", ["text": "turn on the light", "context": ["line": "a\nb"]]),
        WyomingEvent("audio-chunk", ["rate": 16000, "width": 2, "channels": 1], payload: (0..<3200).map { UInt8($0 % 251) }),
        WyomingEvent("synthesize", ["text": "héllo ☃"]),
    ]

    @Test("events survive encoding, however the stream is cut", arguments: [1, 2, 7, 100, 4096, 1 << 20])
    func roundTrip(cut: Int) throws {
        let stream = Self.sample.flatMap { $0.encoded() }
        #expect(try Self.events(stream, cut: cut) == Self.sample)
    }

    @Test("the header is one line with the version and only the lengths that apply, as async_write_event writes it")
    func headerShape() throws {
        let encoded = WyomingEvent("ping").encoded()
        #expect(String(decoding: encoded, as: UTF8.self) == "{\"type\":\"ping\",\"version\":\"1.10.2\"}\n")
        let withData = WyomingEvent("transcript", ["text": "hi"], payload: [1, 2]).encoded()
        let newline = try #require(withData.firstIndex(of: 10))
        let header = try #require(try JSONValue.parse(Data(withData[..<newline])).objectValue)
        #expect(header["data_length"] == 13 && header["payload_length"] == 2)
        #expect(Array(withData[(newline + 1)...]) == Self.bytes("{\"text\":\"hi\"}") + [1, 2])
    }

    @Test("data inline in the header is kept, and data after it wins")
    func inlineData() throws {
        let body = Self.bytes("{\"text\":\"after\"}")
        let stream = Self.bytes("{\"type\":\"recognize\",\"data\":{\"text\":\"inline\",\"context\":{\"a\":1}},\"data_length\":\(body.count)}\n") + body
        let event = try #require(try Self.events(stream, cut: 5).first)
        #expect(event.data["text"] == "after" && event.data["context"] == ["a": 1])
    }

    @Test("blank lines between events are skipped")
    func blankLines() throws {
        let stream = Self.bytes("\n\r\n{\"type\":\"ping\"}\n\n")
        #expect(try Self.events(stream, cut: 3).map(\.type) == ["ping"])
    }

    @Test("bad headers name what is wrong", arguments: [
        ("hello\n", "bad-header", "not JSON"),
        ("[1,2]\n", "bad-header", "array"),
        ("{\"data\":{}}\n", "bad-header", "\"type\""),
        ("{\"type\":3}\n", "bad-header", "\"type\""),
        ("{\"type\":\"x\",\"data\":[]}\n", "bad-header", "\"data\""),
        ("{\"type\":\"x\",\"data_length\":-1}\n", "bad-header", "\"data_length\""),
        ("{\"type\":\"x\",\"payload_length\":1.5}\n", "bad-header", "\"payload_length\""),
        ("{\"type\":\"x\",\"payload_length\":\"10\"}\n", "bad-header", "\"payload_length\""),
    ])
    func badHeaders(stream: String, code: String, mention: String) {
        var reader = WyomingFrameReader()
        reader.append(Self.bytes(stream))
        #expect {
            _ = try reader.next()
        } throws: { error in
            guard let error = error as? WyomingProtocolError else { return false }
            return error.code == code && error.description.contains(mention) && error.isFatal
        }
    }

    @Test("limits are checked before the bytes arrive")
    func limits() throws {
        var limits = WyomingLimits()
        limits.headerBytes = 100
        limits.dataBytes = 50
        limits.payloadBytes = 1000
        var reader = WyomingFrameReader(limits: limits)
        // A header line longer than the limit fails as soon as the limit is passed, newline or not.
        reader.append([UInt8](repeating: UInt8(ascii: "x"), count: 101))
        #expect(throws: WyomingProtocolError.headerTooLong(limit: 100)) { try reader.next() }

        for (field, length) in [("data_length", 51), ("payload_length", 1001)] {
            var reader = WyomingFrameReader(limits: limits)
            reader.append(Self.bytes("{\"type\":\"x\",\"\(field)\":\(length)}\n"))
            #expect(throws: WyomingProtocolError.tooLarge(field: field, length: length, limit: field == "data_length" ? 50 : 1000)) { try reader.next() }
        }
        // At the limits, everything passes.
        var exact = WyomingFrameReader(limits: limits)
        exact.append(Self.bytes("{\"type\":\"x\",\"payload_length\":1000}\n") + [UInt8](repeating: 0, count: 1000))
        #expect(try exact.next()?.payload.count == 1000)
    }

    @Test("data that is not a JSON object is an error the stream survives")
    func badData() throws {
        var reader = WyomingFrameReader()
        reader.append(Self.bytes("{\"type\":\"recognize\",\"data_length\":5}\n[1,2]{\"type\":\"ping\"}\n"))
        #expect {
            _ = try reader.next()
        } throws: { error in
            guard let error = error as? WyomingProtocolError else { return false }
            return error.code == "bad-data" && !error.isFatal && error.description.contains("recognize")
        }
        #expect(try reader.next()?.type == "ping")
    }

    @Test("a long connection's buffer does not grow with what it has read")
    func bufferCompaction() throws {
        var reader = WyomingFrameReader()
        let chunk = WyomingEvent("audio-chunk", payload: [UInt8](repeating: 7, count: 10_000)).encoded()
        for _ in 0..<200 {
            reader.append(chunk)
            #expect(try reader.next()?.payload.count == 10_000)
        }
        #expect(reader.bufferedBytes == 0 && reader.isAtEventBoundary)
    }
}

@Suite("Wyoming address")
struct WyomingAddressTests {
    @Test func parses() throws {
        #expect(try WyomingAddress(uri: "tcp://127.0.0.1:10700") == WyomingAddress(host: "127.0.0.1", port: 10_700))
        #expect(try WyomingAddress(uri: "tcp://[::1]:0") == WyomingAddress(host: "::1", port: 0))
        #expect(WyomingAddress(host: "::1", port: 5).description == "tcp://[::1]:5")
    }

    @Test("bad URIs say what is wrong", arguments: [
        ("unix:///tmp/x", "tcp://"), ("tcp://127.0.0.1", "PORT"), ("tcp://:10700", "HOST"), ("tcp://h:99999", "port"), ("tcp://h:x", "port"),
    ])
    func rejects(uri: String, mention: String) {
        #expect {
            _ = try WyomingAddress(uri: uri)
        } throws: { error in
            (error as? WyomingAddressError)?.message.contains(mention) == true
        }
    }
}
