import Foundation

/// Walks an `ExpressionNode` against a scope. One is made per evaluation; it holds no state beyond the
/// scope reference and the current projection element.
struct ExpressionEvaluator {
    let scope: ExpressionScope
    let source: String
    /// The element inside `list.![…]` / `list.?[…]`; bare identifiers read its fields.
    var element: JSONValue?

    func fail(_ message: String, offset: Int? = nil) -> ExpressionError {
        ExpressionError(message: offset.map { "\(message) at offset \($0)" } ?? message, source: source, offset: offset)
    }

    // MARK: scope access

    func firstEntity(_ name: String) -> EntityMatch? {
        for e in scope.entities where e.entity == name { return e }
        return nil
    }

    /// The value `@name` stands for: number-like system entities give their number so `@sys-number > 5`
    /// compares numerically; every other entity gives its normalised value string.
    static func typedValue(of e: EntityMatch) -> JSONValue {
        switch e.entity {
        case "sys-number", "sys-percentage", "sys-currency":
            if let n = e.metadata?["numeric_value"]?.doubleValue { return .number(n) }
            if let n = Double(e.value) { return .number(n) }
            return .string(e.value)
        default:
            return .string(e.value)
        }
    }

    func entityObjects(named name: String) -> JSONValue {
        var out: [JSONValue] = []
        for e in scope.entities where e.entity == name { out.append(e.json) }
        return out.isEmpty ? .null : .array(out)
    }

    func rootValue(_ root: ExpressionRoot) -> JSONValue {
        switch root {
        case .context: return .object(scope.context)
        case .entities: return .array(scope.entities.map(\.json))
        case .intents: return .array(scope.intents.map(\.json))
        case .input: return .object(JSONObject([("text", .string(scope.inputText))]))
        // The output object is not part of the scope; Hark presents it as empty.
        case .output: return .object(JSONObject())
        case .intent: return scope.intents.first.map { .string($0.intent) } ?? .null
        }
    }

    /// Does a value (entity value string, or a number) equal the `:value` of a shorthand test?
    static func shorthandMatches(_ value: String, _ test: String) -> Bool {
        if value == test { return true }
        if let a = Double(value), let b = Double(test) { return a == b }
        return false
    }

    // MARK: evaluation

    func evaluate(_ node: ExpressionNode) throws(ExpressionError) -> JSONValue {
        switch node {
        case .literal(let v):
            return v
        case .list(let items):
            var out: [JSONValue] = []
            out.reserveCapacity(items.count)
            for item in items { out.append(try evaluate(item)) }
            return .array(out)
        case .intentTest(let name):
            return .bool(scope.intents.first?.intent == name)
        case .entity(let name):
            return firstEntity(name).map(ExpressionEvaluator.typedValue) ?? .null
        case .entityTest(let name, let test):
            // IBM: `@city:Boston` is `entities['city']?.contains('Boston')` — any match, not just the first.
            for e in scope.entities where e.entity == name && ExpressionEvaluator.shorthandMatches(e.value, test) {
                return .bool(true)
            }
            return .bool(false)
        case .entityProperty(let name, let property):
            return entityProperty(name, property)
        case .variable(let name):
            return scope.context[name] ?? .null
        case .variableTest(let name, let test):
            guard let v = scope.context[name] else { return .bool(false) }
            switch v {
            case .string(let s): return .bool(ExpressionEvaluator.shorthandMatches(s, test))
            case .number, .bool: return .bool(ExpressionEvaluator.shorthandMatches(v.javaString, test))
            default: return .bool(false)
            }
        case .root(let root):
            return rootValue(root)
        case .entitiesNamed(let name):
            return entityObjects(named: name)
        case .identifier(let name, let offset):
            if let element {
                if case .object(let o) = element { return o[name] ?? .null }
                throw fail("no property '\(name)' on \(element.typeName)", offset: offset)
            }
            throw fail("unknown variable '\(name)'", offset: offset)
        case .this:
            return element ?? .null
        case .member(let base, let name, let safe):
            let b = try evaluate(base)
            return try member(b, name, safe: safe)
        case .index(let base, let indexNode, _):
            let b = try evaluate(base)
            let i = try evaluate(indexNode)
            return try index(b, i)
        case .method(.root(let root), .size, let argNodes, _) where argNodes.isEmpty && root != .context:
            // `entities.size()` runs on most turns; count without building the JSON array.
            switch root {
            case .entities: return .number(Double(scope.entities.count))
            case .intents: return .number(Double(scope.intents.count))
            default: return try call(.size, on: rootValue(root), args: [])
            }
        case .method(let base, let method, let argNodes, let safe):
            let receiver = try evaluate(base)
            if safe, receiver.isNull { return .null }
            var args: [JSONValue] = []
            args.reserveCapacity(argNodes.count)
            for a in argNodes { args.append(try evaluate(a)) }
            return try call(method, on: receiver, args: args)
        case .unknownMethod(_, let name, let offset):
            throw fail("method \(name)() is not supported by Hark", offset: offset)
        case .function(let name, let argNodes, let offset):
            guard argNodes.isEmpty else { throw fail("\(name)() takes no arguments", offset: offset) }
            switch name {
            case "now": return .string(ExpressionDates.now(scope.now, in: scope.timeZone))
            case "today": return .string(ExpressionDates.today(scope.now, in: scope.timeZone))
            default: throw fail("function \(name)() is not supported by Hark", offset: offset)
            }
        case .not(let a):
            return .bool(!(try evaluate(a).isTruthy))
        case .negate(let a):
            let v = try evaluate(a)
            guard let d = v.numericValue else { throw fail("cannot negate \(v.typeName)") }
            return .number(-d)
        case .and(let a, let b):
            guard try evaluate(a).isTruthy else { return .bool(false) }
            return .bool(try evaluate(b).isTruthy)
        case .or(let a, let b):
            if try evaluate(a).isTruthy { return .bool(true) }
            return .bool(try evaluate(b).isTruthy)
        case .binary(let op, let a, let b):
            return try binary(op, try evaluate(a), try evaluate(b))
        case .ternary(let c, let a, let b):
            return try evaluate(c).isTruthy ? try evaluate(a) : try evaluate(b)
        case .elvis(let a, let b):
            // SpEL's Elvis operator: the left side unless it is null (Spring 5 also treats "" as missing).
            let v = try evaluate(a)
            if v.isNull || v == .string("") { return try evaluate(b) }
            return v
        case .projection(let base, let inner):
            let b = try evaluate(base)
            guard case .array(let items) = b else {
                if b.isNull { return .null }
                throw fail("projection needs an array, found \(b.typeName)")
            }
            var out: [JSONValue] = []
            for item in items {
                var sub = self
                sub.element = item
                out.append(try sub.evaluate(inner))
            }
            return .array(out)
        case .selection(let base, let inner, let kind):
            let b = try evaluate(base)
            guard case .array(let items) = b else {
                if b.isNull { return .null }
                throw fail("selection needs an array, found \(b.typeName)")
            }
            var out: [JSONValue] = []
            for item in items {
                var sub = self
                sub.element = item
                if try sub.evaluate(inner).isTruthy { out.append(item) }
            }
            switch kind {
            case .all: return .array(out)
            case .first: return out.first ?? .null
            case .last: return out.last ?? .null
            }
        case .unsupported(let what, let offset):
            throw fail("\(what) is not supported by Hark", offset: offset)
        }
    }

    func entityProperty(_ name: String, _ property: String) -> JSONValue {
        if property == "values" {
            // `.values`: every value of that entity, in input order (IBM: `"airports": "@airport.values"`).
            var out: [JSONValue] = []
            for e in scope.entities where e.entity == name { out.append(ExpressionEvaluator.typedValue(of: e)) }
            return .array(out)
        }
        guard let e = firstEntity(name) else { return .null }
        switch property {
        case "literal": return .string(e.literal)
        case "value": return ExpressionEvaluator.typedValue(of: e)
        case "location": return .array([.number(Double(e.start)), .number(Double(e.end))])
        case "confidence": return .number(e.confidence)
        case "entity": return .string(e.entity)
        case "groups": return e.groups.map { .array($0) } ?? .null
        case "metadata": return e.metadata.map { .object($0) } ?? .null
        case "numeric_value":
            return e.metadata?["numeric_value"] ?? Double(e.value).map { .number($0) } ?? .null
        default: return e.json[property] ?? .null
        }
    }

    func member(_ base: JSONValue, _ name: String, safe: Bool) throws(ExpressionError) -> JSONValue {
        switch base {
        case .object(let o):
            if let v = o[name] { return v }
            // `entities.airport[0].literal` (IBM documents it): the input text the entity's location spans.
            if name == "literal", o["entity"] != nil, case .array(let loc)? = o["location"], loc.count == 2,
                let a = loc[0].doubleValue, let b = loc[1].doubleValue
            {
                let scalars = Array(scope.inputText.unicodeScalars)
                let lo = max(0, min(Int(a), scalars.count)), hi = max(lo, min(Int(b), scalars.count))
                var out = String.UnicodeScalarView()
                out.append(contentsOf: scalars[lo..<hi])
                return .string(String(out))
            }
            return .null
        case .null:
            // Watson's shorthand inserts `?.` for you; reading through a missing value gives null rather
            // than an exception for both `.` and `?.`, so `$user.name` with no `$user` is just null.
            return .null
        case .array(let a):
            // `entities.city` style: the elements whose `entity` is that name.
            let matches = a.filter { $0["entity"]?.stringValue == name }
            return matches.isEmpty ? .null : .array(matches)
        default:
            if safe { return .null }
            throw fail("no property '\(name)' on \(base.typeName)")
        }
    }

    func index(_ base: JSONValue, _ i: JSONValue) throws(ExpressionError) -> JSONValue {
        switch (base, i) {
        case (.array(let a), .number(let d)):
            let k = Int(exactly: d.rounded(.towardZero)) ?? -1
            guard a.indices.contains(k) else {
                // Watson throws for an index out of range (`intents[0]` with no intents); the condition is false.
                throw fail("index \(JSONValue.format(number: d)) out of range for an array of \(a.count)")
            }
            return a[k]
        case (.object(let o), .string(let k)):
            return o[k] ?? .null
        case (.array(let a), .string(let k)):
            let matches = a.filter { $0["entity"]?.stringValue == k }
            return matches.isEmpty ? .null : .array(matches)
        case (.string(let s), .number(let d)):
            let k = Int(d)
            guard k >= 0, k < s.count else { throw fail("index \(k) out of range for a string of \(s.count)") }
            return .string(String(s[s.index(s.startIndex, offsetBy: k)]))
        case (.null, _):
            return .null
        default:
            throw fail("cannot index \(base.typeName) with \(i.typeName)")
        }
    }

    // MARK: operators

    /// The string an intent or entity object stands for in a comparison: `intents[0] == 'help'` compares
    /// the intent name (IBM documents this form), `entities['city'][0] == 'Boston'` the entity value.
    static func comparable(_ v: JSONValue) -> JSONValue {
        if case .object(let o) = v {
            if let i = o["intent"], o["confidence"] != nil { return i }
            if o["entity"] != nil, let value = o["value"] { return value }
        }
        return v
    }

    static func looselyEqual(_ a: JSONValue, _ b: JSONValue) -> Bool {
        let a = comparable(a), b = comparable(b)
        switch (a, b) {
        case (.number(let x), .number(let y)): return x == y
        // `@year == 2016` compares an entity value string with a number.
        case (.number(let x), .string(let s)), (.string(let s), .number(let x)):
            return Double(s.trimmingWhitespace()).map { $0 == x } ?? false
        default: return a == b
        }
    }

    /// Ordering for `< <= > >=`; nil when the two cannot be ordered (then the comparison is false).
    /// Numbers (or numeric strings) compare as numbers, other strings lexicographically (so
    /// `'2026-11-30' < '2026-12-01'` works). A null operand makes the comparison false: Watson's shorthand
    /// expands `@sys-number < 1` to a null-safe read, and a missing number should not count as "less than 1".
    static func order(_ a: JSONValue, _ b: JSONValue) -> ComparisonResult? {
        let a = comparable(a), b = comparable(b)
        if let x = a.numericValue, let y = b.numericValue {
            return x < y ? .orderedAscending : (x > y ? .orderedDescending : .orderedSame)
        }
        if case .string(let x) = a, case .string(let y) = b {
            return x < y ? .orderedAscending : (x > y ? .orderedDescending : .orderedSame)
        }
        if case .bool(let x) = a, case .bool(let y) = b {
            return x == y ? .orderedSame : (!x ? .orderedAscending : .orderedDescending)
        }
        return nil
    }

    static func isIntegral(_ d: Double) -> Bool { d == d.rounded() && abs(d) < 9.0e15 }

    func binary(_ op: BinaryOperator, _ a: JSONValue, _ b: JSONValue) throws(ExpressionError) -> JSONValue {
        switch op {
        case .equal: return .bool(ExpressionEvaluator.looselyEqual(a, b))
        case .notEqual: return .bool(!ExpressionEvaluator.looselyEqual(a, b))
        case .less, .lessEqual, .greater, .greaterEqual:
            guard let r = ExpressionEvaluator.order(a, b) else { return .bool(false) }
            switch op {
            case .less: return .bool(r == .orderedAscending)
            case .lessEqual: return .bool(r != .orderedDescending)
            case .greater: return .bool(r == .orderedDescending)
            default: return .bool(r != .orderedAscending)
            }
        case .matches:
            guard case .string(let s) = a, case .string(let p) = b else { return .bool(false) }
            return .bool(try ExpressionRegex.wholeMatch(p, s, source: source))
        case .add:
            if case .string(let x) = a { return .string(x + b.javaString) }
            if case .string(let y) = b { return .string(a.javaString + y) }
            if case .array(let x) = a, case .array(let y) = b { return .array(x + y) }
            guard case .number(let x) = a, case .number(let y) = b else {
                throw fail("cannot add \(a.typeName) and \(b.typeName)")
            }
            return .number(x + y)
        case .subtract, .multiply, .divide, .remainder, .power:
            guard case .number(let x) = a, case .number(let y) = b else {
                throw fail("operator '\(op.rawValue)' needs numbers, found \(a.typeName) and \(b.typeName)")
            }
            switch op {
            case .subtract: return .number(x - y)
            case .multiply: return .number(x * y)
            case .divide:
                // Java semantics: integers divide with truncation (`7 / 2` is 3), others as doubles.
                if ExpressionEvaluator.isIntegral(x), ExpressionEvaluator.isIntegral(y) {
                    guard y != 0 else { throw fail("division by zero") }
                    return .number((x / y).rounded(.towardZero))
                }
                return .number(x / y)
            case .remainder:
                guard y != 0 else { throw fail("division by zero") }
                return .number(x.truncatingRemainder(dividingBy: y))
            default:
                return .number(pow(x, y))
            }
        }
    }
}
