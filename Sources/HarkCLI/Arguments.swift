import Foundation

/// A usage error: the command line is wrong. Exits 64 (EX_USAGE) with the command's usage.
struct UsageError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}

/// A failure of the work itself (a bad file, a malformed workspace). Exits 1, or 65 (EX_DATAERR) for bad input data.
struct CommandFailure: Error, CustomStringConvertible {
    var message: String
    var exitCode: Int32 = 1
    var description: String { message }
}

/// A cursor over a command's arguments: take flags and options by name, then positionals;
/// `finish()` rejects anything left over, so an unknown flag is never silently ignored.
struct Arguments {
    private var items: [String]
    private var consumed: [Bool]
    private var afterDoubleDash: Int?

    init(_ items: [String]) {
        self.items = items
        consumed = Array(repeating: false, count: items.count)
        afterDoubleDash = items.firstIndex(of: "--")
        if let d = afterDoubleDash { consumed[d] = true }
    }

    private func isOptionSlot(_ i: Int) -> Bool { afterDoubleDash.map { i < $0 } ?? true }

    /// `--name` present? (also accepts `--name=true/false`)
    mutating func flag(_ name: String) throws(UsageError) -> Bool {
        var found = false
        for i in items.indices where !consumed[i] && isOptionSlot(i) {
            if items[i] == name {
                consumed[i] = true
                found = true
            } else if items[i].hasPrefix(name + "=") {
                consumed[i] = true
                let v = items[i].dropFirst(name.count + 1)
                guard v == "true" || v == "false" else { throw UsageError(message: "\(name) takes no value (got \"\(v)\")") }
                found = v == "true"
            }
        }
        return found
    }

    /// `--name VALUE` or `--name=VALUE`; the last one wins.
    mutating func option(_ name: String) throws(UsageError) -> String? {
        var value: String?
        var i = 0
        while i < items.count {
            defer { i += 1 }
            guard !consumed[i], isOptionSlot(i) else { continue }
            if items[i] == name {
                consumed[i] = true
                guard i + 1 < items.count, !consumed[i + 1], isOptionSlot(i + 1) else { throw UsageError(message: "\(name) needs a value") }
                consumed[i + 1] = true
                value = items[i + 1]
                i += 1
            } else if items[i].hasPrefix(name + "=") {
                consumed[i] = true
                value = String(items[i].dropFirst(name.count + 1))
            }
        }
        return value
    }

    mutating func option<T>(_ name: String, parse: (String) -> T?, expected: String) throws(UsageError) -> T? {
        guard let raw = try option(name) else { return nil }
        guard let v = parse(raw) else { throw UsageError(message: "\(name): expected \(expected), got \"\(raw)\"") }
        return v
    }

    /// An option that takes `on` or `off`: true or false, nil when absent; anything else is a usage error.
    mutating func onOff(_ name: String) throws(UsageError) -> Bool? {
        try option(name, parse: { ["on": true, "off": false][$0] }, expected: "on or off")
    }

    /// All remaining arguments that are not options. An unconsumed `-x`/`--x` before `--` is an unknown flag.
    mutating func positionals() throws(UsageError) -> [String] {
        var out: [String] = []
        for i in items.indices where !consumed[i] {
            if isOptionSlot(i), items[i].hasPrefix("-"), items[i] != "-" {
                throw UsageError(message: "unknown option \(items[i].split(separator: "=").first.map(String.init) ?? items[i])")
            }
            consumed[i] = true
            out.append(items[i])
        }
        return out
    }

    /// Fails on anything not taken.
    func finish() throws(UsageError) {
        if let i = items.indices.first(where: { !consumed[$0] }) {
            throw UsageError(message: items[i].hasPrefix("-") ? "unknown option \(items[i])" : "unexpected argument \"\(items[i])\"")
        }
    }
}
