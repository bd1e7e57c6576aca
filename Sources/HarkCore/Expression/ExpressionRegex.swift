import Foundation

/// Compiled regular expressions, cached per pattern so conditions never compile on the hot path.
/// `NSRegularExpression` is immutable and safe to use from several threads once built.
final class ExpressionRegex: @unchecked Sendable {
    private let lock = NSLock()
    private var cache: [String: NSRegularExpression] = [:]
    static let shared = ExpressionRegex()

    static func compiled(_ pattern: String, source: String) throws(ExpressionError) -> NSRegularExpression {
        let me = shared
        me.lock.lock()
        defer { me.lock.unlock() }
        if let r = me.cache[pattern] { return r }
        do {
            let r = try NSRegularExpression(pattern: pattern)
            if me.cache.count > 512 { me.cache.removeAll(keepingCapacity: true) }
            me.cache[pattern] = r
            return r
        } catch {
            throw ExpressionError(message: "invalid regular expression '\(pattern)'", source: source)
        }
    }

    /// Java `String.matches`: the whole string must match.
    static func wholeMatch(_ pattern: String, _ s: String, source: String) throws(ExpressionError) -> Bool {
        let r = try compiled(pattern, source: source)
        let ns = s as NSString
        guard let m = r.firstMatch(in: s, options: [.anchored], range: NSRange(location: 0, length: ns.length)) else {
            return false
        }
        if m.range.length == ns.length { return true }
        // A shorter leftmost match does not rule out a full one (`a|ab` on "ab"); try an end-anchored form.
        let full = try compiled("(?:\(pattern))\\z", source: source)
        return full.firstMatch(in: s, options: [.anchored], range: NSRange(location: 0, length: ns.length)) != nil
    }

    /// Watson `String.find`: some part of the string matches.
    static func find(_ pattern: String, _ s: String, source: String) throws(ExpressionError) -> Bool {
        let r = try compiled(pattern, source: source)
        return r.firstMatch(in: s, range: NSRange(location: 0, length: (s as NSString).length)) != nil
    }

    /// Watson `String.extract(regex, group)`: the group of the first match, "" when nothing matches.
    static func extract(_ pattern: String, group: Int, _ s: String, source: String) throws(ExpressionError) -> String {
        let r = try compiled(pattern, source: source)
        let ns = s as NSString
        guard let m = r.firstMatch(in: s, range: NSRange(location: 0, length: ns.length)) else { return "" }
        guard group >= 0, group < m.numberOfRanges else {
            throw ExpressionError(message: "no group \(group) in regular expression '\(pattern)'", source: source)
        }
        let range = m.range(at: group)
        return range.location == NSNotFound ? "" : ns.substring(with: range)
    }

    static func split(_ pattern: String, _ s: String, source: String) throws(ExpressionError) -> [String] {
        let r = try compiled(pattern, source: source)
        let ns = s as NSString
        var out: [String] = []
        var last = 0
        for m in r.matches(in: s, range: NSRange(location: 0, length: ns.length)) where m.range.length > 0 {
            out.append(ns.substring(with: NSRange(location: last, length: m.range.location - last)))
            last = m.range.location + m.range.length
        }
        out.append(ns.substring(from: last))
        // Java drops trailing empty strings.
        while out.count > 1, out.last == "" { out.removeLast() }
        return out
    }

    static func replaceAll(_ pattern: String, _ template: String, _ s: String, source: String) throws(ExpressionError) -> String {
        let r = try compiled(pattern, source: source)
        return r.stringByReplacingMatches(
            in: s, range: NSRange(location: 0, length: (s as NSString).length), withTemplate: template)
    }
}
