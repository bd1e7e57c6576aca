import Foundation

extension ExpressionEvaluator {
    func argCount(_ method: ExpressionMethod, _ args: [JSONValue], _ range: ClosedRange<Int>) throws(ExpressionError) {
        guard range.contains(args.count) else {
            let want = range.lowerBound == range.upperBound ? "\(range.lowerBound)" : "\(range.lowerBound)–\(range.upperBound)"
            throw fail("\(method.rawValue)() takes \(want) argument(s), got \(args.count)")
        }
    }

    func stringArg(_ method: ExpressionMethod, _ args: [JSONValue], _ i: Int) throws(ExpressionError) -> String {
        guard i < args.count else { throw fail("\(method.rawValue)() needs argument \(i + 1)") }
        if case .string(let s) = args[i] { return s }
        if args[i].isNull { throw fail("\(method.rawValue)() argument \(i + 1) is null") }
        return args[i].javaString
    }

    func intArg(_ method: ExpressionMethod, _ args: [JSONValue], _ i: Int) throws(ExpressionError) -> Int {
        guard i < args.count, let d = args[i].numericValue, d.isFinite, abs(d) < 1e12 else {
            throw fail("\(method.rawValue)() needs a number as argument \(i + 1)")
        }
        return Int(d.rounded(.towardZero))
    }

    func wrongReceiver(_ method: ExpressionMethod, _ receiver: JSONValue) -> ExpressionError {
        fail("\(method.rawValue)() cannot be called on \(receiver.typeName)")
    }

    func dateValue(_ method: ExpressionMethod, _ v: JSONValue) throws(ExpressionError) -> WallClock {
        guard case .string(let s) = v, let w = WallClock(s) else {
            throw fail("\(method.rawValue)() needs a date or time like 2026-11-30 or 17:05:00, found \(v.javaString)")
        }
        return w
    }

    /// Does an array element equal `x`? Entity objects match on their value.
    static func element(_ e: JSONValue, equals x: JSONValue) -> Bool {
        looselyEqual(e, x)
    }

    func call(_ method: ExpressionMethod, on receiver: JSONValue, args: [JSONValue]) throws(ExpressionError) -> JSONValue {
        switch method {
        // MARK: shared by strings and arrays
        case .contains:
            try argCount(method, args, 1...1)
            switch receiver {
            case .string(let s):
                return .bool(s.contains(try stringArg(method, args, 0)))
            case .array(let a):
                return .bool(a.contains { ExpressionEvaluator.element($0, equals: args[0]) })
            case .null:
                // `$list.contains('x')` on an unset variable: false, as the null-safe shorthand gives.
                return .bool(false)
            default: throw wrongReceiver(method, receiver)
            }
        case .size, .length:
            try argCount(method, args, 0...0)
            switch receiver {
            case .string(let s): return .number(Double(s.utf16.count))
            case .array(let a): return .number(Double(a.count))
            case .object(let o): return .number(Double(o.count))
            case .null: return .number(0)
            default: throw wrongReceiver(method, receiver)
            }
        case .isEmpty:
            try argCount(method, args, 0...0)
            switch receiver {
            case .string(let s): return .bool(s.isEmpty)
            case .array(let a): return .bool(a.isEmpty)
            case .object(let o): return .bool(o.isEmpty)
            default: throw wrongReceiver(method, receiver)
            }
        case .append:
            try argCount(method, args, 1...Int.max)
            switch receiver {
            case .string(let s):
                var out = s
                for a in args { out += a.javaString }
                return .string(out)
            case .array(let a):
                return .array(a + args)
            case .null:
                // Appending to an unset variable starts a new array.
                return .array(args)
            default: throw wrongReceiver(method, receiver)
            }
        case .indexOf, .lastIndexOf:
            try argCount(method, args, 1...1)
            switch receiver {
            case .string(let s):
                let needle = try stringArg(method, args, 0)
                let opts: String.CompareOptions = method == .lastIndexOf ? [.literal, .backwards] : [.literal]
                guard let r = s.range(of: needle, options: opts) else { return .number(-1) }
                return .number(Double(s.utf16.distance(from: s.startIndex, to: r.lowerBound)))
            case .array(let a):
                let i = method == .lastIndexOf
                    ? a.lastIndex { ExpressionEvaluator.element($0, equals: args[0]) }
                    : a.firstIndex { ExpressionEvaluator.element($0, equals: args[0]) }
                return .number(Double(i ?? -1))
            default: throw wrongReceiver(method, receiver)
            }
        case .get:
            try argCount(method, args, 1...1)
            switch receiver {
            case .array: return try index(receiver, args[0])
            case .object(let o): return o[try stringArg(method, args, 0)] ?? .null
            case .null: return .null
            default: throw wrongReceiver(method, receiver)
            }
        case .equals:
            try argCount(method, args, 1...1)
            return .bool(receiver == args[0])
        case .toString, .getAsString:
            try argCount(method, args, 0...0)
            return .string(receiver.javaString)
        case .toDouble, .getAsDouble:
            try argCount(method, args, 0...0)
            // IBM: "If the conversion fails, null is returned."
            return receiver.numericValue.map { .number($0) } ?? .null
        case .toInt, .toLong, .getAsInt:
            try argCount(method, args, 0...0)
            guard let d = receiver.numericValue else { return .null }
            return .number(d.rounded(.towardZero))
        case .getAsBoolean:
            try argCount(method, args, 0...0)
            if case .bool = receiver { return receiver }
            if case .string(let s) = receiver { return .bool(s.lowercased() == "true") }
            throw wrongReceiver(method, receiver)

        // MARK: arrays and objects
        case .join:
            try argCount(method, args, 0...1)
            guard case .array(let a) = receiver else { throw wrongReceiver(method, receiver) }
            let sep = args.isEmpty ? "," : try stringArg(method, args, 0)
            return .string(a.map { ExpressionEvaluator.comparable($0).javaString }.joined(separator: sep))
        case .has:
            try argCount(method, args, 1...1)
            guard case .object(let o) = receiver else {
                if receiver.isNull { return .bool(false) }
                throw wrongReceiver(method, receiver)
            }
            return .bool(o[try stringArg(method, args, 0)] != nil)
        case .set:
            try argCount(method, args, 2...2)
            switch receiver {
            case .array(var a):
                let i = try intArg(method, args, 0)
                guard a.indices.contains(i) else { throw fail("set(): index \(i) out of range for an array of \(a.count)") }
                a[i] = args[1]
                return .array(a)
            case .object(var o):
                o[try stringArg(method, args, 0)] = args[1]
                return .object(o)
            default: throw wrongReceiver(method, receiver)
            }
        case .removeValue:
            try argCount(method, args, 1...1)
            guard case .array(var a) = receiver else { throw wrongReceiver(method, receiver) }
            if let i = a.firstIndex(where: { $0 == args[0] }) { a.remove(at: i) }
            return .array(a)
        case .getRandomItem:
            try argCount(method, args, 0...0)
            guard case .array(let a) = receiver else { throw wrongReceiver(method, receiver) }
            return a.randomElement() ?? .null

        // MARK: strings
        case .startsWith, .endsWith, .equalsIgnoreCase, .find, .matches, .concat, .compareTo, .split:
            try argCount(method, args, 1...1)
            let arg = try stringArg(method, args, 0)
            let s: String
            switch receiver {
            case .string(let x): s = x
            // IBM: find() "converts the array or object to a string before making the comparison".
            default:
                guard method == .find, !receiver.isNull else { throw wrongReceiver(method, receiver) }
                s = receiver.javaString
            }
            switch method {
            case .startsWith: return .bool(s.hasPrefix(arg))
            case .endsWith: return .bool(s.hasSuffix(arg))
            case .equalsIgnoreCase: return .bool(s.lowercased() == arg.lowercased())
            case .find: return .bool(try ExpressionRegex.find(arg, s, source: source))
            case .matches: return .bool(try ExpressionRegex.wholeMatch(arg, s, source: source))
            case .concat: return .string(s + arg)
            case .split: return .array(try ExpressionRegex.split(arg, s, source: source).map { .string($0) })
            default: return .number(s < arg ? -1 : (s == arg ? 0 : 1))
            }
        case .extract:
            try argCount(method, args, 2...2)
            guard case .string(let s) = receiver else { throw wrongReceiver(method, receiver) }
            return .string(try ExpressionRegex.extract(
                try stringArg(method, args, 0), group: try intArg(method, args, 1), s, source: source))
        case .replace, .replaceAll:
            try argCount(method, args, 2...2)
            guard case .string(let s) = receiver else { throw wrongReceiver(method, receiver) }
            let a = try stringArg(method, args, 0), b = try stringArg(method, args, 1)
            if method == .replace { return .string(a.isEmpty ? s : s.replacingOccurrences(of: a, with: b)) }
            return .string(try ExpressionRegex.replaceAll(a, b, s, source: source))
        case .substring:
            try argCount(method, args, 1...2)
            guard case .string(let s) = receiver else { throw wrongReceiver(method, receiver) }
            // Java indexes UTF-16 code units.
            let u = Array(s.utf16)
            let from = try intArg(method, args, 0)
            let to = args.count > 1 ? try intArg(method, args, 1) : u.count
            guard from >= 0, to <= u.count, from <= to else {
                throw fail("substring(\(from), \(to)) out of range for a string of length \(u.count)")
            }
            return .string(String(decoding: u[from..<to], as: UTF16.self))
        case .charAt:
            try argCount(method, args, 1...1)
            guard case .string(let s) = receiver else { throw wrongReceiver(method, receiver) }
            let u = Array(s.utf16)
            let i = try intArg(method, args, 0)
            guard u.indices.contains(i) else { throw fail("charAt(\(i)) out of range for a string of length \(u.count)") }
            return .string(String(decoding: u[i...i], as: UTF16.self))
        case .toLowerCase, .toUpperCase, .trim:
            try argCount(method, args, 0...0)
            guard case .string(let s) = receiver else { throw wrongReceiver(method, receiver) }
            switch method {
            case .toLowerCase: return .string(s.lowercased())
            case .toUpperCase: return .string(s.uppercased())
            default: return .string(s.trimmingWhitespace(newlines: true))
            }

        // MARK: dates
        case .reformatDateTime:
            try argCount(method, args, 1...1)
            let d = try dateValue(method, receiver)
            return .string(ExpressionDates.reformat(d, pattern: try stringArg(method, args, 0)))
        case .before, .after, .sameMoment, .sameOrBefore, .sameOrAfter:
            try argCount(method, args, 1...1)
            let a = try dateValue(method, receiver), b = try dateValue(method, args[0])
            // IBM: comparing a date with a time "returns false" (and logs); Hark returns false.
            guard let r = ExpressionDates.compare(a, b) else { return .bool(false) }
            switch method {
            case .before: return .bool(r == .orderedAscending)
            case .after: return .bool(r == .orderedDescending)
            case .sameMoment: return .bool(r == .orderedSame)
            case .sameOrBefore: return .bool(r != .orderedDescending)
            default: return .bool(r != .orderedAscending)
            }
        case .plusDays, .plusMonths, .plusYears, .plusHours, .plusMinutes, .plusSeconds, .plusWeeks,
            .minusDays, .minusMonths, .minusYears, .minusHours, .minusMinutes, .minusSeconds, .minusWeeks:
            try argCount(method, args, 1...1)
            let d = try dateValue(method, receiver)
            var n = try intArg(method, args, 0)
            if method.rawValue.hasPrefix("minus") { n = -n }
            let unit: ExpressionDates.Unit
            switch method {
            case .plusDays, .minusDays: unit = .days
            case .plusMonths, .minusMonths: unit = .months
            case .plusYears, .minusYears: unit = .years
            case .plusHours, .minusHours: unit = .hours
            case .plusMinutes, .minusMinutes: unit = .minutes
            case .plusWeeks, .minusWeeks: unit = .weeks
            default: unit = .seconds
            }
            if d.kind == .date, [.hours, .minutes, .seconds].contains(unit) {
                throw fail("\(method.rawValue)() needs a time or date-time, found the date \(receiver.javaString)")
            }
            if d.kind == .time, [.days, .weeks, .months, .years].contains(unit) {
                throw fail("\(method.rawValue)() needs a date or date-time, found the time \(receiver.javaString)")
            }
            return .string(ExpressionDates.add(n, unit, to: d).text)
        }
    }
}
