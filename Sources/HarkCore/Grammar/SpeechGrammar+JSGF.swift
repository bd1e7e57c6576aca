import Foundation

extension SpeechGrammar {
    /// The grammar in JSGF (Java Speech Grammar Format), factored: the templates and every entity rule are
    /// rendered from their minimised graphs, so shared beginnings and endings are written once. The public
    /// rule is `<command>`.
    public var jsgf: String {
        var lines = ["#JSGF V1.0;", "", "grammar hark;", ""]
        let top = graph.jsgfRules(prefix: "s_")
        lines.append("public <command> = \(top.body);")
        for rule in top.shared { lines.append("<\(rule.name)> = \(rule.body);") }
        for name in rules.keys.sorted() {
            let ruleGraph = GrammarGraph(sentences: rules[name] ?? [])
            let rendered = ruleGraph.jsgfRules(prefix: "s_\(name)_")
            lines.append("<\(name)> = \(rendered.body);")
            for rule in rendered.shared { lines.append("<\(rule.name)> = \(rule.body);") }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Sentences the grammar generates: every template with its rules filled in, at most `perTemplate` per
    /// template. A template with more combinations gets a deterministic sample that still uses every
    /// alternative of each rule it names at least once where the budget allows.
    public func sentences(perTemplate: Int = 200) -> [[String]] {
        var result: [[String]] = []
        var expansions: [String: [[String]]] = [:]
        func expand(_ rule: String, depth: Int) -> [[String]] {
            if let known = expansions[rule] { return known }
            guard depth < 8 else { return [] }
            var out: [[String]] = []
            for alternative in rules[rule] ?? [] {
                out += combine(alternative, limit: 2000, depth: depth + 1, seed: UInt64(out.count))
                if out.count >= 2000 { break }
            }
            expansions[rule] = out
            return out
        }
        func combine(_ elements: [Element], limit: Int, depth: Int, seed: UInt64) -> [[String]] {
            let parts: [[[String]]] = elements.map {
                switch $0 {
                case .word(let w): return [[w]]
                case .rule(let r): return expand(r, depth: depth)
                }
            }
            guard parts.allSatisfy({ !$0.isEmpty }) else { return [] }
            let total = parts.reduce(1.0) { $0 * Double($1.count) }
            if total <= Double(limit) {
                var sentences: [[String]] = [[]]
                for part in parts { sentences = sentences.flatMap { s in part.map { s + $0 } } }
                return sentences
            }
            var rng = SplitMix64(seed: 0x5350_4545_4348 &+ seed)  // "SPEECH"
            var picked: [[String]] = []
            for k in 0..<limit {
                var sentence: [String] = []
                for part in parts {
                    // The first passes walk through every alternative in turn; then random ones.
                    let index = k < part.count ? k : Int(rng.next() % UInt64(part.count))
                    sentence += part[index]
                }
                picked.append(sentence)
            }
            return picked
        }
        for (index, template) in templates.enumerated() {
            result += combine(template, limit: perTemplate, depth: 0, seed: UInt64(index))
        }
        return result
    }
}
