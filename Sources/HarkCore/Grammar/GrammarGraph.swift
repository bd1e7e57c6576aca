import Foundation

/// A set of token sequences as a minimal acyclic automaton: a trie whose equal subtrees are merged, so
/// sequences that share a beginning share its nodes and sequences that share an ending share those.
///
/// Why: PocketSphinx expands a JSGF grammar into a search graph, and a flat list of alternatives costs it
/// a copy of every shared word (docs/measurements.md, "A factored grammar": 107k search nodes
/// flat, 4.6k factored, 14× faster, same accuracy). Rendering the merged graph writes each shared part once.
public struct GrammarGraph: Sendable {
    public typealias Element = SpeechGrammar.Element

    /// A state: whether a sequence may end here, and the tokens that lead on.
    public struct Node: Sendable, Hashable {
        public var isFinal: Bool
        public var edges: [Edge]
    }

    public struct Edge: Sendable, Hashable {
        public var element: Element
        public var target: Int
    }

    public private(set) var nodes: [Node]
    public let start: Int

    /// The minimal graph of `sentences` (an empty set gives a start node that accepts nothing).
    public init(sentences: [[Element]]) {
        // Trie first.
        var trie: [(isFinal: Bool, children: [Element: Int])] = [(false, [:])]
        for sentence in sentences {
            var node = 0
            for element in sentence {
                if let next = trie[node].children[element] {
                    node = next
                } else {
                    trie.append((false, [:]))
                    trie[node].children[element] = trie.count - 1
                    node = trie.count - 1
                }
            }
            trie[node].isFinal = true
        }
        // Then merge equal subtrees bottom-up: a node's identity is its finality and its (token, child) edges.
        // Trie children always have higher indices than their parents, so walking backwards is bottom-up.
        var canonical = [Int](repeating: 0, count: trie.count)
        var registry: [Node: Int] = [:]
        var nodes: [Node] = []
        for index in stride(from: trie.count - 1, through: 0, by: -1) {
            let edges = trie[index].children.map { Edge(element: $0.key, target: canonical[$0.value]) }
                .sorted { ($0.element, $0.target) < ($1.element, $1.target) }
            let node = Node(isFinal: trie[index].isFinal, edges: edges)
            if let existing = registry[node] {
                canonical[index] = existing
            } else {
                nodes.append(node)
                registry[node] = nodes.count - 1
                canonical[index] = nodes.count - 1
            }
        }
        self.nodes = nodes
        start = canonical[0]
    }

    /// How many edges the graph has (a measure of the search graph PocketSphinx will build).
    public var edgeCount: Int { nodes.reduce(0) { $0 + $1.edges.count } }

    /// Positions in `words` where a path from the start, beginning at `position`, can end; `ruleEnds(name, p)`
    /// says where a rule starting at `p` can end.
    func ends(of words: [String], from position: Int, ruleEnds: (String, Int) -> Set<Int>) -> Set<Int> {
        var result: Set<Int> = []
        var seen: Set<[Int]> = []
        var stack: [(node: Int, position: Int)] = [(start, position)]
        while let (node, p) = stack.popLast() {
            guard seen.insert([node, p]).inserted else { continue }
            if nodes[node].isFinal { result.insert(p) }
            for edge in nodes[node].edges {
                switch edge.element {
                case .word(let w):
                    if p < words.count, words[p] == w { stack.append((edge.target, p + 1)) }
                case .rule(let r):
                    for q in ruleEnds(r, p) { stack.append((edge.target, q)) }
                }
            }
        }
        return result
    }

    // MARK: JSGF

    /// The graph as JSGF rule bodies: the expression for the start node, plus one private rule per node that
    /// several others lead to (named `prefix` + index), so that no part is written twice.
    func jsgfRules(prefix: String) -> (body: String, shared: [(name: String, body: String)]) {
        var inDegree = [Int](repeating: 0, count: nodes.count)
        for node in nodes { for edge in node.edges { inDegree[edge.target] += 1 } }
        var shared: [Int] = []
        var names: [Int: String] = [:]
        for (index, node) in nodes.enumerated() where inDegree[index] > 1 && !node.edges.isEmpty && index != start {
            names[index] = "\(prefix)\(names.count)"
            shared.append(index)
        }

        func token(_ element: Element) -> String {
            switch element {
            case .word(let w): return w
            case .rule(let r): return "<\(r)>"
            }
        }
        // The expression for everything after `index`; empty when nothing follows.
        func expression(_ index: Int) -> String {
            let node = nodes[index]
            guard !node.edges.isEmpty else { return "" }
            // Group tokens that lead to the same place: "(brew | get) <rest>".
            var order: [Int] = []
            var byTarget: [Int: [Element]] = [:]
            for edge in node.edges {
                if byTarget[edge.target] == nil { order.append(edge.target) }
                byTarget[edge.target, default: []].append(edge.element)
            }
            let alternatives = order.map { target -> String in
                let tokens = byTarget[target] ?? []
                let head = tokens.count == 1 ? token(tokens[0]) : "(" + tokens.map(token).joined(separator: " | ") + ")"
                let rest = names[target].map { "<\($0)>" } ?? expression(target)
                return rest.isEmpty ? head : head + " " + rest
            }
            let body = alternatives.joined(separator: " | ")
            if node.isFinal { return "[" + body + "]" }
            return alternatives.count > 1 ? "(" + body + ")" : body
        }
        return (expression(start), shared.map { (names[$0] ?? "", expression($0)) })
    }
}
