import Foundation

extension JSONValue {
    /// Serialises the value. Compact by default (one line, for JSON Lines output); `pretty` indents by two spaces.
    public func serialized(pretty: Bool = false) -> String {
        String(decoding: serializedBytes(pretty: pretty), as: UTF8.self)
    }

    /// The same text as `serialized(pretty:)`, as UTF-8 bytes: what an HTTP body or a file needs, without
    /// building a `String` first.
    public func serializedBytes(pretty: Bool = false) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        write(to: &out, pretty: pretty, indent: 0)
        return out
    }

    // Bytes, not a String: appending to a String scalar by scalar was most of a /message response's
    // serialisation time (bench/README.md, the server benchmark).
    private func write(to out: inout [UInt8], pretty: Bool, indent: Int) {
        switch self {
        case .null: Self.append("null", to: &out)
        case .bool(let b): Self.append(b ? "true" : "false", to: &out)
        case .number(let d): Self.append(JSONValue.format(number: d), to: &out)
        case .string(let s): JSONValue.writeString(s, to: &out)
        case .array(let a):
            if a.isEmpty {
                Self.append("[]", to: &out)
                return
            }
            out.append(UInt8(ascii: "["))
            for (i, v) in a.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                if pretty { Self.newline(indent + 1, to: &out) }
                v.write(to: &out, pretty: pretty, indent: indent + 1)
            }
            if pretty { Self.newline(indent, to: &out) }
            out.append(UInt8(ascii: "]"))
        case .object(let o):
            if o.isEmpty {
                Self.append("{}", to: &out)
                return
            }
            out.append(UInt8(ascii: "{"))
            for (i, pair) in o.pairs.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                if pretty { Self.newline(indent + 1, to: &out) }
                JSONValue.writeString(pair.key, to: &out)
                Self.append(pretty ? ": " : ":", to: &out)
                pair.value.write(to: &out, pretty: pretty, indent: indent + 1)
            }
            if pretty { Self.newline(indent, to: &out) }
            out.append(UInt8(ascii: "}"))
        }
    }

    private static func append(_ text: String, to out: inout [UInt8]) {
        var text = text
        text.withUTF8 { out.append(contentsOf: $0) }
    }

    private static func newline(_ indent: Int, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\n"))
        out.append(contentsOf: repeatElement(UInt8(ascii: " "), count: 2 * indent))
    }

    /// Integers print without a fraction; other numbers with the shortest round-tripping representation.
    public static func format(number d: Double) -> String {
        if d.isNaN || d.isInfinite { return "null" }
        if d == d.rounded(), abs(d) < 1e15 { return String(Int64(d)) }
        return "\(d)"
    }

    /// `s` as a JSON string literal: quotes, backslashes and control characters escaped, everything else
    /// (non-ASCII included) copied as its UTF-8 bytes, in runs.
    static func writeString(_ s: String, to out: inout [UInt8]) {
        var s = s
        out.append(UInt8(ascii: "\""))
        s.withUTF8 { bytes in
            var runStart = 0
            for (i, byte) in bytes.enumerated() where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                out.append(contentsOf: bytes[runStart..<i])
                runStart = i + 1
                switch byte {
                case UInt8(ascii: "\""): append("\\\"", to: &out)
                case UInt8(ascii: "\\"): append("\\\\", to: &out)
                case UInt8(ascii: "\n"): append("\\n", to: &out)
                case UInt8(ascii: "\r"): append("\\r", to: &out)
                case UInt8(ascii: "\t"): append("\\t", to: &out)
                default:
                    let hex = Array("0123456789abcdef".utf8)
                    append("\\u00", to: &out)
                    out.append(hex[Int(byte >> 4)])
                    out.append(hex[Int(byte & 0xF)])
                }
            }
            out.append(contentsOf: bytes[runStart...])
        }
        out.append(UInt8(ascii: "\""))
    }
}
