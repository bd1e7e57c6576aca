import Foundation

extension Workspace {
    /// Intents whose dialog reads the user's own words: a node that names the intent in its condition (or sits
    /// under one that does) and uses `input.text` in an action's parameters, its output or its context. What is
    /// said after such a command's words is a message or a name the workspace cannot list ("announce that dinner
    /// is ready", "drop in on the garage"), so speech recognition may hear it only approximately and the turn
    /// still goes right; a recogniser that checks the words against any English must not turn it away for that
    /// (`SpeechUnderstanding`, docs/speech.md "Any English as the reference").
    public var freeTextIntents: Set<String> {
        let byID = Dictionary(dialogNodes.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        var found: Set<String> = []
        for node in dialogNodes where !node.disabled && Self.readsInputText(node) {
            var current: DialogNode? = node
            var seen: Set<String> = []
            while let here = current, seen.insert(here.id).inserted {
                found.formUnion(Self.intentNames(in: here.conditions ?? ""))
                current = here.parent.flatMap { byID[$0] }
            }
        }
        return found.intersection(intents.map(\.name))
    }

    static func readsInputText(_ node: DialogNode) -> Bool {
        var values: [JSONValue] = node.actions.map { .object($0.parameters) }
        if let output = node.output { values.append(output) }
        if let context = node.context { values.append(.object(context)) }
        return values.contains { Self.mentions("input.text", in: $0) }
    }

    static func mentions(_ needle: String, in value: JSONValue) -> Bool {
        switch value {
        case .string(let text): text.contains(needle)
        case .array(let items): items.contains { mentions(needle, in: $0) }
        case .object(let object): object.pairs.contains { mentions(needle, in: $0.value) }
        default: false
        }
    }

    /// The intents a condition names (`#Name`; Watson's intent names are letters, digits, `_`, `-` and `.`).
    static func intentNames(in condition: String) -> Set<String> {
        var names: Set<String> = []
        var rest = condition[...]
        while let hash = rest.firstIndex(of: "#") {
            let name = rest[rest.index(after: hash)...].prefix { $0.isLetter || $0.isNumber || "_-.".contains($0) }
            if !name.isEmpty { names.insert(String(name)) }
            rest = rest[rest.index(after: hash)...]
        }
        return names
    }
}
