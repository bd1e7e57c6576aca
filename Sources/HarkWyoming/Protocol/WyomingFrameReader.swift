import Foundation
import HarkCore

/// Cuts a byte stream into Wyoming events, however the bytes arrive (one at a time or many events at
/// once), checking every length against `WyomingLimits` before buffering it: a client cannot make the
/// server hold more than a header line, one event's data and one payload.
public struct WyomingFrameReader: Sendable {
    public let limits: WyomingLimits
    private var buffer: [UInt8] = []
    /// Bytes of `buffer` already consumed.
    private var start = 0
    /// Bytes of `buffer` already searched for the header's newline.
    private var scanned = 0
    /// A header read, waiting for its data and payload.
    private var pending: (type: String, data: JSONObject, dataLength: Int, payloadLength: Int)?

    public init(limits: WyomingLimits = WyomingLimits()) {
        self.limits = limits
    }

    /// Bytes received but not yet part of a returned event.
    public var bufferedBytes: Int { buffer.count - start }

    /// True when nothing is half-read: the stream ended (or may end) between events.
    public var isAtEventBoundary: Bool { pending == nil && bufferedBytes == 0 }

    public mutating func append<C: Collection>(_ bytes: C) where C.Element == UInt8 {
        buffer.append(contentsOf: bytes)
    }

    /// The next complete event, or nil when more bytes are needed. After a fatal error the reader should
    /// be dropped with its connection.
    public mutating func next() throws(WyomingProtocolError) -> WyomingEvent? {
        while true {
            if pending == nil {
                guard let line = try headerLine() else { return nil }
                // Blank lines between events carry nothing: skip them rather than fail.
                if line.allSatisfy({ $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\r") || $0 == UInt8(ascii: "\t") }) { continue }
                pending = try Self.header(line, limits: limits)
            }
            guard let header = pending else { return nil }
            guard bufferedBytes >= header.dataLength + header.payloadLength else { return nil }
            var data = header.data
            let dataEnd = start + header.dataLength
            let payloadEnd = dataEnd + header.payloadLength
            let payload = Array(buffer[dataEnd..<payloadEnd])
            let dataBytes = buffer[start..<dataEnd]
            consume(upTo: payloadEnd)
            pending = nil
            if !dataBytes.isEmpty {
                let parsed: JSONValue
                do { parsed = try JSONValue.parse(Data(dataBytes)) } catch { throw .badData("not JSON: \(error) (event \"\(header.type)\", data_length \(header.dataLength))") }
                guard let object = parsed.objectValue else {
                    throw .badData("a JSON \(parsed.typeName), expected an object (event \"\(header.type)\")")
                }
                for (key, value) in object.pairs { data[key] = value }
            }
            return WyomingEvent(header.type, data, payload: payload)
        }
    }

    /// The next header line without its newline, or nil when it has not all arrived.
    private mutating func headerLine() throws(WyomingProtocolError) -> ArraySlice<UInt8>? {
        let from = max(start, scanned)
        if let newline = buffer[from...].firstIndex(of: UInt8(ascii: "\n")) {
            guard newline - start <= limits.headerBytes else { throw .headerTooLong(limit: limits.headerBytes) }
            let line = buffer[start..<newline]
            consume(upTo: newline + 1)
            return line
        }
        scanned = buffer.count
        guard bufferedBytes <= limits.headerBytes else { throw .headerTooLong(limit: limits.headerBytes) }
        return nil
    }

    private mutating func consume(upTo index: Int) {
        start = index
        scanned = max(scanned, start)
        // Drop consumed bytes once they outweigh the rest, so a long connection's buffer stays small.
        if start > 64 * 1024 && start * 2 > buffer.count {
            buffer.removeFirst(start)
            scanned -= start
            start = 0
        }
    }

    static func header(_ line: ArraySlice<UInt8>, limits: WyomingLimits) throws(WyomingProtocolError)
        -> (type: String, data: JSONObject, dataLength: Int, payloadLength: Int) {
        let value: JSONValue
        do { value = try JSONValue.parse(Data(line)) } catch { throw .headerNotJSON(error.description) }
        guard let header = value.objectValue else { throw .headerNotObject(value.typeName) }
        guard let typeValue = header["type"] else { throw .badHeaderField(field: "type", expected: "an event type such as \"describe\"", got: "nothing") }
        guard let type = typeValue.stringValue, !type.isEmpty else {
            throw .badHeaderField(field: "type", expected: "a non-empty string", got: describe(typeValue))
        }
        var data = JSONObject()
        if let inline = header["data"], !inline.isNull {
            guard let object = inline.objectValue else { throw .badHeaderField(field: "data", expected: "an object", got: describe(inline)) }
            data = object
        }
        func length(_ field: String, limit: Int) throws(WyomingProtocolError) -> Int {
            guard let raw = header[field], !raw.isNull else { return 0 }
            guard let number = raw.doubleValue, number >= 0, number.rounded() == number, number <= Double(Int32.max) else {
                throw .badHeaderField(field: field, expected: "a whole number of bytes ≥ 0", got: describe(raw))
            }
            guard Int(number) <= limit else { throw .tooLarge(field: field, length: Int(number), limit: limit) }
            return Int(number)
        }
        let dataLength = try length("data_length", limit: limits.dataBytes)
        let payloadLength = try length("payload_length", limit: limits.payloadBytes)
        return (type, data, dataLength, payloadLength)
    }

    /// A JSON value as an error message shows it, shortened.
    static func describe(_ value: JSONValue) -> String {
        let text = value.serialized()
        return text.count > 40 ? String(text.prefix(40)) + "…" : text
    }
}
