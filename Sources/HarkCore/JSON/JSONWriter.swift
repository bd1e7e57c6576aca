import Foundation

extension JSONValue {
    /// Serialises the value. Compact by default (one line, for JSON Lines output); `pretty` indents by two spaces.
    public func serialized(pretty: Bool = false) -> String {
        var out = ""
        out.reserveCapacity(256)
        write(to: &out, pretty: pretty, indent: 0)
        return out
    }

    private func write(to out: inout String, pretty: Bool, indent: Int) {
        switch self {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .number(let d): out += JSONValue.format(number: d)
        case .string(let s): JSONValue.writeString(s, to: &out)
        case .array(let a):
            if a.isEmpty {
                out += "[]"
                return
            }
            out += "["
            for (i, v) in a.enumerated() {
                if i > 0 { out += "," }
                if pretty { out += "\n" + String(repeating: "  ", count: indent + 1) }
                v.write(to: &out, pretty: pretty, indent: indent + 1)
            }
            if pretty { out += "\n" + String(repeating: "  ", count: indent) }
            out += "]"
        case .object(let o):
            if o.isEmpty {
                out += "{}"
                return
            }
            out += "{"
            for (i, pair) in o.pairs.enumerated() {
                if i > 0 { out += "," }
                if pretty { out += "\n" + String(repeating: "  ", count: indent + 1) }
                JSONValue.writeString(pair.key, to: &out)
                out += pretty ? ": " : ":"
                pair.value.write(to: &out, pretty: pretty, indent: indent + 1)
            }
            if pretty { out += "\n" + String(repeating: "  ", count: indent) }
            out += "}"
        }
    }

    /// Integers print without a fraction; other numbers with the shortest round-tripping representation.
    public static func format(number d: Double) -> String {
        if d.isNaN || d.isInfinite { return "null" }
        if d == d.rounded(), abs(d) < 1e15 { return String(Int64(d)) }
        return "\(d)"
    }

    static func writeString(_ s: String, to out: inout String) {
        out += "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 {
                    out += String(format: "\\u%04x", scalar.value)
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        out += "\""
    }
}
