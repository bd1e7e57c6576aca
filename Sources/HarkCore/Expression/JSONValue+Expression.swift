import Foundation

extension JSONValue {
    /// Watson/SpEL truthiness used by conditions.
    ///
    /// - `null` and `false` are false; `true` is true.
    /// - Numbers are false when zero. This is Watson's documented behaviour for number-like entities: a
    ///   condition `@sys-number` (or `@sys-currency`) is false when the user said "0" — IBM recommends
    ///   `@sys-number || @sys-number == 0`, and the bank-simple export has a `@zero_match` entity for it.
    /// - Strings are false when empty (`$name` with `""` does not fire), true otherwise.
    /// - Arrays and objects are true: they exist.
    public var isTruthy: Bool {
        switch self {
        case .null: return false
        case .bool(let b): return b
        case .number(let d): return d != 0 && !d.isNaN
        case .string(let s): return !s.isEmpty
        case .array, .object: return true
        }
    }

    /// The value as output text: strings bare, integral numbers without `.0`, `null` as empty, arrays and
    /// objects as compact JSON (IBM: `"this is my array: $array"` renders `this is my array: ["one","two"]`).
    var renderedText: String {
        switch self {
        case .null: return ""
        case .string(let s): return s
        default: return javaString
        }
    }

    /// The value as Java's `String.valueOf` would print it in SpEL string concatenation (`null` → "null").
    var javaString: String {
        switch self {
        case .null: return "null"
        case .bool(let b): return b ? "true" : "false"
        case .number(let d): return JSONValue.format(number: d)
        case .string(let s): return s
        case .array, .object: return serialized()
        }
    }

    /// A number from a number, or from a string that spells one ("25", " 3.5 ").
    var numericValue: Double? {
        switch self {
        case .number(let d): return d
        case .string(let s): return Double(s.trimmingWhitespace())
        case .bool: return nil
        default: return nil
        }
    }
}
