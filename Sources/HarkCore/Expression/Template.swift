import Foundation

/// Output text or a context value with `$var`, `@entity` and `<? expr ?>` inside.
///
/// Rules (Watson's, where IBM documents them; Hark's choice, noted, where it does not):
/// - `<? expr ?>` is replaced by the value of `expr` as text.
/// - `$name` is a context variable; `$(name)` allows any characters. A name starts with a letter or `_`
///   and continues with letters, digits, `_`, and `-` followed by a letter. `$name.field` reads a field
///   when `$name` is an object that has it; otherwise `.field` stays as text ("… zip code $zip.").
/// - `@name` is the first entity of that name — its value (IBM: `@airport` renders `JFK` even when the
///   user said "Kennedy Airport"); `@name.literal`, `.value`, `.values`, `.location`, `.confidence` read
///   that property.
/// - `$` or `@` not followed by a name start stays literal (`$$amount` renders `$` and the amount;
///   `$ 0.00` and `$150` stay as written). A sigil right after a letter or digit is literal too, so
///   e-mail addresses (`help@bank.com`) survive.
/// - `\$`, `\@` and `\<` write the character itself.
/// - Unknown variables and absent entities render as empty text; an expression that fails renders empty.
/// - `#` is never special in text.
public struct Template: Sendable {
    enum Segment: Sendable {
        case text(String)
        case expression(CompiledExpression)
        case variable(String, fields: [String])
        case entity(String, property: String?)
    }

    let segments: [Segment]
    public let source: String

    public static func parse(_ text: String) throws(ExpressionError) -> Template {
        var parser = TemplateParser(text)
        return Template(segments: try parser.parse(), source: text)
    }

    /// Methods and functions used in `<? ?>` parts that Hark does not implement.
    public var unsupportedFeatures: [String] {
        segments.flatMap { segment -> [String] in
            if case .expression(let e) = segment { return e.unsupportedFeatures }
            return []
        }
    }

    /// No substitutions at all: the text renders as itself.
    public var isConstant: Bool {
        segments.allSatisfy { if case .text = $0 { return true } else { return false } }
    }

    /// Text substitution for output text.
    public func render(in scope: ExpressionScope) -> String {
        if segments.count == 1, case .text(let t) = segments[0] { return t }
        var out = ""
        for segment in segments {
            switch segment {
            case .text(let t): out += t
            case .variable(let name, let fields):
                let (value, rest) = Template.variable(name, fields, in: scope)
                out += value.renderedText
                for f in rest { out += "." + f }
            default:
                out += ((try? segmentValue(segment, in: scope)) ?? .null).renderedText
            }
        }
        return out
    }

    /// For context values: a template that is exactly one `<? e ?>`, `$var` or `@entity` (surrounding
    /// whitespace allowed) yields the typed value — number, array, object, null — as IBM documents under
    /// "Indirect data type conversion"; anything else yields the rendered string.
    public func value(in scope: ExpressionScope) throws(ExpressionError) -> JSONValue {
        var single: Segment?
        for segment in segments {
            if case .text(let t) = segment, t.allSatisfy(\.isWhitespace) { continue }
            if single != nil { return .string(render(in: scope)) }
            single = segment
        }
        guard let single else { return .string(render(in: scope)) }
        switch single {
        case .text: return .string(render(in: scope))
        case .variable(let name, let fields):
            let (value, rest) = Template.variable(name, fields, in: scope)
            return rest.isEmpty ? value : .string(render(in: scope))
        default:
            return try segmentValue(single, in: scope)
        }
    }

    func segmentValue(_ segment: Segment, in scope: ExpressionScope) throws(ExpressionError) -> JSONValue {
        switch segment {
        case .text(let t): return .string(t)
        case .expression(let e): return try e.evaluate(in: scope)
        case .variable(let name, let fields): return Template.variable(name, fields, in: scope).0
        case .entity(let name, let property):
            let ev = ExpressionEvaluator(scope: scope, source: source, element: nil)
            if let property { return ev.entityProperty(name, property) }
            return ev.firstEntity(name).map(ExpressionEvaluator.typedValue) ?? .null
        }
    }

    /// `$name.a.b`: follows the fields while they exist in objects; returns the unread rest as text.
    static func variable(_ name: String, _ fields: [String], in scope: ExpressionScope) -> (JSONValue, ArraySlice<String>) {
        var value = scope.context[name] ?? .null
        var i = 0
        while i < fields.count, case .object(let o) = value, let next = o[fields[i]] {
            value = next
            i += 1
        }
        return (value, fields[i...])
    }
}

struct TemplateParser {
    let chars: [Character]
    let source: String
    var pos = 0
    var segments: [Template.Segment] = []
    var text = ""

    init(_ source: String) {
        self.source = source
        self.chars = Array(source)
    }

    func peek(_ k: Int = 0) -> Character? { pos + k < chars.count ? chars[pos + k] : nil }

    mutating func flush() {
        if !text.isEmpty {
            segments.append(.text(text))
            text = ""
        }
    }

    /// Same name rule as the expression lexer (`nameEnd`), without dots.
    mutating func scanName() -> String {
        let start = pos
        pos = nameEnd(in: chars, from: pos, allowDot: false)
        return String(chars[start..<pos])
    }

    mutating func parse() throws(ExpressionError) -> [Template.Segment] {
        while let c = peek() {
            let previous: Character? = pos > 0 ? chars[pos - 1] : nil
            let afterWord = previous.map { $0.isLetter || $0.isNumber } ?? false
            if c == "\\", let n = peek(1), n == "$" || n == "@" || n == "<" || n == "\\" {
                text.append(n)
                pos += 2
            } else if c == "<", peek(1) == "?" {
                let open = pos
                pos += 2
                let start = pos
                while pos < chars.count, !(chars[pos] == "?" && peek(1) == ">") { pos += 1 }
                guard pos < chars.count else {
                    throw ExpressionError(message: "expected '?>' to close the '<?' at offset \(open)", source: source, offset: open)
                }
                let body = String(chars[start..<pos])
                pos += 2
                if body.allSatisfy(\.isWhitespace) {
                    throw ExpressionError(
                        message: "expected an expression inside '<? ?>' at offset \(start)", source: source, offset: start)
                }
                let expression: CompiledExpression
                do {
                    expression = try CompiledExpression.parse(body)
                } catch {
                    // Report the offset within the whole template.
                    let at = error.offset.map { start + $0 }
                    var message = error.message
                    if let o = error.offset, let at, let r = message.range(of: "at offset \(o)", options: .backwards) {
                        message.replaceSubrange(r, with: "at offset \(at)")
                    }
                    throw ExpressionError(message: message, source: source, offset: at)
                }
                flush()
                segments.append(.expression(expression))
            } else if c == "$", !afterWord, peek(1) == "(" {
                guard let close = chars[(pos + 2)...].firstIndex(of: ")") else {
                    text.append(c)
                    pos += 1
                    continue
                }
                let name = String(chars[(pos + 2)..<close])
                pos = close + 1
                flush()
                segments.append(.variable(name, fields: []))
            } else if c == "$", !afterWord, let n = peek(1), isNameStart(n) {
                pos += 1
                let name = scanName()
                var fields: [String] = []
                while peek() == ".", let n = peek(1), isNameStart(n) {
                    pos += 1
                    fields.append(scanName())
                }
                flush()
                segments.append(.variable(name, fields: fields))
            } else if c == "@", !afterWord, let n = peek(1), isNameStart(n) {
                pos += 1
                let name = scanName()
                var property: String?
                if peek() == ".", let n = peek(1), isNameStart(n) {
                    let save = pos
                    pos += 1
                    let p = scanName()
                    if entityPropertyNames.contains(p) { property = p } else { pos = save }
                }
                flush()
                segments.append(.entity(name, property: property))
            } else {
                text.append(c)
                pos += 1
            }
        }
        flush()
        return segments
    }
}
