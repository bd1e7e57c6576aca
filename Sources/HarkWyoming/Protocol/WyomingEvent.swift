import Foundation
import HarkCore

/// One Wyoming event: a type, a JSON object of data and an optional binary payload (PCM audio).
///
/// On the wire (the `wyoming` package on PyPI is the specification, `wyoming/event.py`): one UTF-8 JSON
/// header line `{"type", "version", "data_length", "payload_length"}` ending in `\n`, then `data_length`
/// bytes of JSON data, then `payload_length` bytes of payload. A reader must also accept `data` inline in
/// the header; data that follows the header is merged over it.
public struct WyomingEvent: Sendable, Equatable {
    /// The event type, e.g. `describe`, `audio-chunk`, `transcript`.
    public var type: String
    /// The event's fields (`text`, `rate`, `context`, …).
    public var data: JSONObject
    /// Binary payload: PCM audio for `audio-chunk`, empty otherwise.
    public var payload: [UInt8]

    /// The version of the `wyoming` package whose protocol this implements; sent in every header.
    public static let protocolVersion = "1.10.2"

    public init(_ type: String, _ data: JSONObject = JSONObject(), payload: [UInt8] = []) {
        self.type = type
        self.data = data
        self.payload = payload
    }

    /// The bytes to send: the header line, the data (only when there is some, as `async_write_event` does)
    /// and the payload.
    public func encoded() -> [UInt8] {
        var header: JSONObject = ["type": .string(type), "version": .string(Self.protocolVersion)]
        let dataBytes = data.isEmpty ? [] : JSONValue.object(data).serializedBytes()
        if !dataBytes.isEmpty { header["data_length"] = .number(Double(dataBytes.count)) }
        if !payload.isEmpty { header["payload_length"] = .number(Double(payload.count)) }
        var out = JSONValue.object(header).serializedBytes()
        out.reserveCapacity(out.count + 1 + dataBytes.count + payload.count)
        out.append(UInt8(ascii: "\n"))
        out.append(contentsOf: dataBytes)
        out.append(contentsOf: payload)
        return out
    }

    /// `error` with a readable text and a short machine code (`wyoming/error.py`).
    public static func error(_ text: String, code: String) -> WyomingEvent {
        WyomingEvent("error", ["text": .string(text), "code": .string(code)])
    }
}
