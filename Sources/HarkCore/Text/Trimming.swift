/// Trimming without Foundation: `trimmingCharacters(in:)` converts the string to an `NSString` and back (UTF-16
/// both ways), which showed up on every `/message` request (its bearer token, its content type, its text).
extension StringProtocol {
    /// What `trimmingCharacters(in: .whitespaces)` gives — or `.whitespacesAndNewlines` with `newlines` —
    /// as Foundation defines those sets: Unicode's space separators (Zs) and tab, plus U+000A–U+000D, U+0085,
    /// U+2028 and U+2029 for newlines.
    public func trimmingWhitespace(newlines: Bool = false) -> String {
        let text = String(self)
        let scalars = text.unicodeScalars
        func isSpace(_ scalar: Unicode.Scalar) -> Bool {
            switch scalar.value {
            case 0x09, 0x20: return true
            case 0x0A...0x0D, 0x85, 0x2028, 0x2029: return newlines
            case 0..<0x80: return false
            default: return scalar.properties.generalCategory == .spaceSeparator
            }
        }
        guard let first = scalars.firstIndex(where: { !isSpace($0) }) else { return "" }
        var end = scalars.endIndex
        while end > first, isSpace(scalars[scalars.index(before: end)]) { end = scalars.index(before: end) }
        return first == scalars.startIndex && end == scalars.endIndex ? text : String(text[first..<end])
    }
}
