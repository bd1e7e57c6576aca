import Foundation

/// A JSON syntax error with the 1-based line and column where it was found.
public struct JSONSyntaxError: Error, Sendable, CustomStringConvertible {
    public let line: Int
    public let column: Int
    public let message: String
    public var description: String { "line \(line), column \(column): \(message)" }
}

extension JSONValue {
    /// Parses UTF-8 JSON text (RFC 8259). A leading byte-order mark is accepted.
    public static func parse(_ data: Data) throws(JSONSyntaxError) -> JSONValue {
        var parser = JSONParser(bytes: [UInt8](data))
        return try parser.parseDocument()
    }

    /// Parses JSON text.
    public static func parse(_ text: String) throws(JSONSyntaxError) -> JSONValue {
        var parser = JSONParser(bytes: Array(text.utf8))
        return try parser.parseDocument()
    }
}

/// A recursive-descent parser over UTF-8 bytes.
struct JSONParser {
    let bytes: [UInt8]
    var index = 0
    var depth = 0
    static let maximumDepth = 512

    init(bytes: [UInt8]) {
        self.bytes = bytes
        if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { index = 3 }
    }

    mutating func parseDocument() throws(JSONSyntaxError) -> JSONValue {
        skipWhitespace()
        if index >= bytes.count { throw error("empty document: expected a JSON value") }
        let value = try parseValue()
        skipWhitespace()
        if index < bytes.count { throw error("unexpected \(describe(bytes[index])) after the end of the JSON value") }
        return value
    }

    func error(_ message: String, at position: Int? = nil) -> JSONSyntaxError {
        let end = min(position ?? index, bytes.count)
        var line = 1
        var column = 1
        var i = 0
        while i < end {
            if bytes[i] == UInt8(ascii: "\n") {
                line += 1
                column = 1
            } else if bytes[i] & 0xC0 != 0x80 {
                column += 1
            }
            i += 1
        }
        return JSONSyntaxError(line: line, column: column, message: message)
    }

    func describe(_ byte: UInt8) -> String {
        if byte >= 0x20 && byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
        return String(format: "byte 0x%02X", byte)
    }

    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    mutating func parseValue() throws(JSONSyntaxError) -> JSONValue {
        guard index < bytes.count else { throw error("unexpected end of input: expected a value") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
        default: throw error("unexpected \(describe(bytes[index])): expected a value")
        }
    }

    mutating func expectLiteral(_ literal: String) throws(JSONSyntaxError) {
        let lit = Array(literal.utf8)
        guard index + lit.count <= bytes.count, bytes[index..<index + lit.count].elementsEqual(lit) else {
            throw error("invalid literal: expected \(literal)")
        }
        index += lit.count
    }

    mutating func enter() throws(JSONSyntaxError) {
        depth += 1
        if depth > Self.maximumDepth { throw error("nesting deeper than \(Self.maximumDepth) levels") }
    }

    mutating func parseObject() throws(JSONSyntaxError) -> JSONValue {
        try enter()
        defer { depth -= 1 }
        index += 1
        var object = JSONObject()
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return .object(object)
        }
        while true {
            skipWhitespace()
            guard index < bytes.count else { throw error("unexpected end of input inside an object") }
            guard bytes[index] == UInt8(ascii: "\"") else {
                throw error("unexpected \(describe(bytes[index])): expected a member name in double quotes")
            }
            let keyStart = index
            let key = try parseString()
            if object[key] != nil { throw error("duplicate member name \"\(key)\"", at: keyStart) }
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else {
                throw error("expected ':' after member name \"\(key)\"")
            }
            index += 1
            skipWhitespace()
            object[key] = try parseValue()
            skipWhitespace()
            guard index < bytes.count else { throw error("unexpected end of input inside an object") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            if bytes[index] == UInt8(ascii: "}") {
                index += 1
                return .object(object)
            }
            throw error("unexpected \(describe(bytes[index])): expected ',' or '}' in an object")
        }
    }

    mutating func parseArray() throws(JSONSyntaxError) -> JSONValue {
        try enter()
        defer { depth -= 1 }
        index += 1
        var array: [JSONValue] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return .array(array)
        }
        while true {
            skipWhitespace()
            array.append(try parseValue())
            skipWhitespace()
            guard index < bytes.count else { throw error("unexpected end of input inside an array") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            if bytes[index] == UInt8(ascii: "]") {
                index += 1
                return .array(array)
            }
            throw error("unexpected \(describe(bytes[index])): expected ',' or ']' in an array")
        }
    }

    mutating func parseString() throws(JSONSyntaxError) -> String {
        let start = index
        index += 1
        var out: [UInt8] = []
        var runStart = index
        while true {
            guard index < bytes.count else { throw error("unterminated string", at: start) }
            let b = bytes[index]
            if b == UInt8(ascii: "\"") {
                out.append(contentsOf: bytes[runStart..<index])
                index += 1
                break
            }
            if b < 0x20 { throw error("control character \(describe(b)) inside a string (escape it)") }
            if b == UInt8(ascii: "\\") {
                out.append(contentsOf: bytes[runStart..<index])
                index += 1
                guard index < bytes.count else { throw error("unterminated escape sequence") }
                let e = bytes[index]
                index += 1
                switch e {
                case UInt8(ascii: "\""): out.append(0x22)
                case UInt8(ascii: "\\"): out.append(0x5C)
                case UInt8(ascii: "/"): out.append(0x2F)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try parseHex4()
                    if (0xD800...0xDBFF).contains(scalar) {
                        if index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") {
                            index += 2
                            let low = try parseHex4()
                            guard (0xDC00...0xDFFF).contains(low) else { throw error("invalid UTF-16 surrogate pair") }
                            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                        } else {
                            throw error("unpaired UTF-16 surrogate")
                        }
                    } else if (0xDC00...0xDFFF).contains(scalar) {
                        throw error("unpaired UTF-16 surrogate")
                    }
                    out.append(contentsOf: Array(String(Character(Unicode.Scalar(scalar)!)).utf8))
                default:
                    throw error("invalid escape '\\\(Character(Unicode.Scalar(e)))'", at: index - 2)
                }
                runStart = index
                continue
            }
            index += 1
        }
        guard let s = String(validating: out, as: UTF8.self) else { throw error("string is not valid UTF-8", at: start) }
        return s
    }

    mutating func parseHex4() throws(JSONSyntaxError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw error("incomplete \\u escape") }
        var v: UInt32 = 0
        for _ in 0..<4 {
            let c = bytes[index]
            let d: UInt32
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): d = UInt32(c - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): d = UInt32(c - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): d = UInt32(c - UInt8(ascii: "A") + 10)
            default: throw error("invalid hex digit \(describe(c)) in \\u escape")
            }
            v = v * 16 + d
            index += 1
        }
        return v
    }

    mutating func parseNumber() throws(JSONSyntaxError) -> Double {
        let start = index
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        func digits(_ p: inout JSONParser) -> Int {
            let s = p.index
            while p.index < p.bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(p.bytes[p.index]) { p.index += 1 }
            return p.index - s
        }
        guard index < bytes.count else { throw error("incomplete number", at: start) }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
            if index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) {
                throw error("leading zeros are not allowed in numbers", at: start)
            }
        } else if digits(&self) == 0 {
            throw error("invalid number: expected a digit", at: start)
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            if digits(&self) == 0 { throw error("invalid number: expected a digit after '.'") }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            if digits(&self) == 0 { throw error("invalid number: expected a digit in the exponent") }
        }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        guard let value = Double(text), value.isFinite else { throw error("number \(text) is out of range", at: start) }
        return value
    }
}
