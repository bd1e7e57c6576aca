import Foundation

/// Recursive-descent parser for Watson's SpEL subset, with SpEL's precedence (lowest first):
/// ternary/elvis, `||`, `&&`, comparisons, `+ -`, `* / %`, `^`, unary `! - +`, postfix (`.`, `?.`, `[]`,
/// projections), primaries.
struct ExpressionParser {
    let tokens: [ExpressionToken]
    let source: String
    var pos = 0
    /// Features Hark does not implement, in the order they appear.
    var unsupported: [String] = []
    var depth = 0

    init(source: String) throws(ExpressionError) {
        var lexer = ExpressionLexer(source)
        self.tokens = try lexer.tokenize()
        self.source = source
    }

    static func parse(_ source: String) throws(ExpressionError) -> (ExpressionNode, [String]) {
        var p = try ExpressionParser(source: source)
        // An empty condition (exports have `"conditions": ""`) is valid and never true: Watson does not
        // trigger a node whose condition is blank.
        if case .end = p.tokens[0].kind { return (.literal(.bool(false)), []) }
        let node = try p.parseExpression()
        guard case .end = p.current.kind else { throw p.unexpected(expecting: "an operator or the end") }
        return (node, p.unsupported)
    }

    var current: ExpressionToken { tokens[pos] }

    func error(_ message: String, at offset: Int) -> ExpressionError {
        ExpressionError(message: "\(message) at offset \(offset)", source: source, offset: offset)
    }

    func describe(_ kind: ExpressionTokenKind) -> String {
        switch kind {
        case .number(let d): return "number \(JSONValue.format(number: d))"
        case .string: return "string"
        case .identifier(let s): return "'\(s)'"
        case .intent(let s): return "'#\(s)'"
        case .entity(let s, _): return "'@\(s)'"
        case .variable(let s, _): return "'$\(s)'"
        case .symbol(let s): return "'\(s)'"
        case .end: return "end of expression"
        }
    }

    func unexpected(expecting: String) -> ExpressionError {
        error("unexpected \(describe(current.kind)), expected \(expecting)", at: current.offset)
    }

    func isSymbol(_ s: String) -> Bool {
        if case .symbol(let t) = current.kind { return t == s }
        return false
    }

    mutating func eat(_ s: String) -> Bool {
        if isSymbol(s) {
            pos += 1
            return true
        }
        return false
    }

    mutating func expect(_ s: String) throws(ExpressionError) {
        guard eat(s) else { throw unexpected(expecting: "'\(s)'") }
    }

    mutating func parseExpression() throws(ExpressionError) -> ExpressionNode {
        depth += 1
        defer { depth -= 1 }
        // Deeply nested input (fuzzing, "((((…") must not overflow the stack.
        guard depth < 200 else { throw error("expression nested too deeply", at: current.offset) }
        let cond = try parseOr()
        if eat("?:") { return .elvis(cond, try parseExpression()) }
        if eat("?") {
            let a = try parseExpression()
            try expect(":")
            let b = try parseExpression()
            return .ternary(cond, a, b)
        }
        return cond
    }

    mutating func parseOr() throws(ExpressionError) -> ExpressionNode {
        var left = try parseAnd()
        while eat("||") { left = .or(left, try parseAnd()) }
        return left
    }

    mutating func parseAnd() throws(ExpressionError) -> ExpressionNode {
        var left = try parseComparison()
        while eat("&&") { left = .and(left, try parseComparison()) }
        return left
    }

    mutating func parseComparison() throws(ExpressionError) -> ExpressionNode {
        var left = try parseAdditive()
        while case .symbol(let s) = current.kind, ["==", "!=", "<", "<=", ">", ">=", "matches"].contains(s) {
            pos += 1
            left = .binary(BinaryOperator(rawValue: s)!, left, try parseAdditive())
        }
        return left
    }

    mutating func parseAdditive() throws(ExpressionError) -> ExpressionNode {
        var left = try parseMultiplicative()
        while case .symbol(let s) = current.kind, s == "+" || s == "-" {
            pos += 1
            left = .binary(s == "+" ? .add : .subtract, left, try parseMultiplicative())
        }
        return left
    }

    mutating func parseMultiplicative() throws(ExpressionError) -> ExpressionNode {
        var left = try parsePower()
        while case .symbol(let s) = current.kind, s == "*" || s == "/" || s == "%" {
            pos += 1
            left = .binary(BinaryOperator(rawValue: s)!, left, try parsePower())
        }
        return left
    }

    mutating func parsePower() throws(ExpressionError) -> ExpressionNode {
        let base = try parseUnary()
        if eat("^") { return .binary(.power, base, try parseUnary()) }
        return base
    }

    mutating func parseUnary() throws(ExpressionError) -> ExpressionNode {
        depth += 1
        defer { depth -= 1 }
        guard depth < 200 else { throw error("expression nested too deeply", at: current.offset) }
        if eat("!") { return .not(try parseUnary()) }
        if eat("-") {
            let operand = try parseUnary()
            if case .literal(.number(let d)) = operand { return .literal(.number(-d)) }
            return .negate(operand)
        }
        if eat("+") { return try parseUnary() }
        return try parsePostfix(try parsePrimary())
    }

    mutating func parseArguments() throws(ExpressionError) -> [ExpressionNode] {
        try expect("(")
        var args: [ExpressionNode] = []
        if eat(")") { return args }
        repeat { args.append(try parseExpression()) } while eat(",")
        try expect(")")
        return args
    }

    mutating func parsePostfix(_ base: ExpressionNode) throws(ExpressionError) -> ExpressionNode {
        var node = base
        while true {
            if isSymbol(".") || isSymbol("?.") {
                let safe = isSymbol("?.")
                pos += 1
                guard case .identifier(let name) = current.kind else {
                    throw unexpected(expecting: "a property or method name")
                }
                let nameOffset = current.offset
                pos += 1
                if isSymbol("(") {
                    let args = try parseArguments()
                    if let m = ExpressionMethod(rawValue: name) {
                        node = .method(node, m, args, safe: safe)
                    } else {
                        unsupported.append("method \(name)()")
                        node = .unknownMethod(node, name, offset: nameOffset)
                    }
                } else if case .entity(let e) = node, entityPropertyNames.contains(name) {
                    node = .entityProperty(e, name)
                } else if case .root(.entities) = node {
                    node = .entitiesNamed(name)
                } else {
                    node = .member(node, name, safe: safe)
                }
            } else if isSymbol("[") {
                pos += 1
                let index = try parseExpression()
                try expect("]")
                if case .root(.entities) = node, case .literal(.string(let name)) = index {
                    node = .entitiesNamed(name)
                } else {
                    node = .index(node, index, safe: false)
                }
            } else if isSymbol(".!") || isSymbol(".?") || isSymbol(".^") || isSymbol(".$") {
                guard case .symbol(let s) = current.kind else { break }
                pos += 2  // the operator and its '['
                let inner = try parseExpression()
                try expect("]")
                switch s {
                case ".!": node = .projection(node, inner)
                case ".?": node = .selection(node, inner, .all)
                case ".^": node = .selection(node, inner, .first)
                default: node = .selection(node, inner, .last)
                }
            } else {
                return node
            }
        }
        return node
    }

    mutating func parseList(close: String) throws(ExpressionError) -> ExpressionNode {
        var items: [ExpressionNode] = []
        if eat(close) { return .list(items) }
        repeat { items.append(try parseExpression()) } while eat(",")
        try expect(close)
        return .list(items)
    }

    mutating func parsePrimary() throws(ExpressionError) -> ExpressionNode {
        let token = current
        switch token.kind {
        case .number(let d):
            pos += 1
            return .literal(.number(d))
        case .string(let s):
            pos += 1
            return .literal(.string(s))
        case .intent(let name):
            pos += 1
            return .intentTest(name)
        case .entity(let name, let test):
            pos += 1
            if let test { return .entityTest(name, test) }
            return .entity(name)
        case .variable(let name, let test):
            pos += 1
            if let test { return .variableTest(name, test) }
            return .variable(name)
        case .symbol("("):
            pos += 1
            let inner = try parseExpression()
            try expect(")")
            return inner
        case .symbol("{"):
            pos += 1
            return try parseList(close: "}")
        case .symbol("["):
            pos += 1
            return try parseList(close: "]")
        case .identifier(let word):
            pos += 1
            switch word.lowercased() {
            case "true": return .literal(.bool(true))
            case "false": return .literal(.bool(false))
            case "null": return .literal(.null)
            default: break
            }
            if word == "#this" { return .this }
            if word == "new" {
                // `new JsonArray()`, `new Date()`, `new Random().nextInt(3)`: Java object construction.
                var name = ""
                while case .identifier(let part) = current.kind {
                    name += name.isEmpty ? part : "." + part
                    pos += 1
                    if !eat(".") { break }
                }
                if isSymbol("(") { _ = try parseArguments() }
                unsupported.append("new \(name)()")
                return .unsupported("new \(name)()", offset: token.offset)
            }
            if word == "T", isSymbol("(") {
                // `T(Math).max(a, b)`, `T(String).format(...)`: Java static types.
                pos += 1
                var name = ""
                while case .identifier(let part) = current.kind {
                    name += name.isEmpty ? part : "." + part
                    pos += 1
                    if !eat(".") { break }
                }
                try expect(")")
                unsupported.append("T(\(name))")
                return .unsupported("T(\(name))", offset: token.offset)
            }
            if isSymbol("(") {
                let args = try parseArguments()
                if word != "now" && word != "today" { unsupported.append("function \(word)()") }
                return .function(word, args, offset: token.offset)
            }
            if let root = ExpressionRoot(rawValue: word) { return .root(root) }
            return .identifier(word, offset: token.offset)
        default:
            throw unexpected(expecting: "a value")
        }
    }
}
