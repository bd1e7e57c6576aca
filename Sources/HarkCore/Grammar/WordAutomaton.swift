/// A finite language of word sequences as a minimal deterministic automaton: what PocketSphinx's grammar
/// search should walk.
///
/// Why: PocketSphinx turns a JSGF grammar into its search graph (an FSG) by copying a rule's states at every
/// place the rule is used, and at every frame its grammar search visits every state of that graph once per
/// phone of the acoustic model (5prealpha's `fsg_history_end_frame`), whether the state is active or not.
/// The factored JSGF of `Intents/barista.json` refers to rules inside rules, and the copies made an FSG of
/// 95,278 states and 834,316 transitions: that walk was most of the decoding time (44% in
/// `fsg_history_end_frame` alone under `perf`). The same language as a minimal deterministic automaton has
/// a few hundred states (docs/speech.md, "The grammar as a minimal automaton").
///
/// Built bottom-up: every rule becomes a minimal automaton once, a rule used inside another (or in a template)
/// is inlined as a copy of that small automaton, and each level is determinised (subset construction) and
/// minimised (an acyclic automaton is minimal when no two states have the same finality and the same
/// transitions to the same states; equal states are merged from the final ones back). Every transition
/// weighs 1, as the transitions PocketSphinx builds from a JSGF without weights do, so a path scores the same
/// in both and only the search graph shrinks.
///
/// The same grammar always gives the same automaton, state for state: every loop over a dictionary's entries goes
/// in the order of the word labels (`inLabelOrder`). Swift seeds its hashing afresh in every process, so a
/// dictionary's own order changes from run to run; the states were numbered in that order, PocketSphinx's search
/// breaks ties between equal paths by state order, and one home.json clip in pink noise began its first word at
/// 0.49 s in one run and 0.50 s in the next, with speech margins -2.394 and -2.419 (docs/speech.md, "The same
/// audio, the same result").
public struct WordAutomaton: Sendable, Equatable {
    /// The words, indexed by the transitions' labels.
    public private(set) var words: [String]
    /// Per state: word index → next state.
    public private(set) var transitions: [[Int: Int]]
    public private(set) var isFinal: [Bool]
    public let start: Int
    /// Word → its label.
    private let wordIndex: [String: Int]

    /// Why a grammar has no such automaton.
    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// A rule uses itself, directly or through others: the language is not finite.
        case recursiveRule(String)
        /// A rule is used but not defined.
        case undefinedRule(String)

        public var description: String {
            switch self {
            case .recursiveRule(let name): "the grammar rule <\(name)> uses itself"
            case .undefinedRule(let name): "the grammar rule <\(name)> is used but not defined"
            }
        }
    }

    /// The automaton of `grammar`: its templates (through the factored graph) with every rule filled in.
    public init(grammar: SpeechGrammar) throws(Failure) {
        var builder = Builder(rules: grammar.rules)
        self = try builder.automaton(of: grammar.graph)
    }

    init(words: [String], transitions: [[Int: Int]], isFinal: [Bool], start: Int) {
        self.words = words
        self.transitions = transitions
        self.isFinal = isFinal
        self.start = start
        wordIndex = Dictionary(words.enumerated().map { ($1, $0) }, uniquingKeysWith: { a, _ in a })
    }

    public var stateCount: Int { transitions.count }
    public var transitionCount: Int { transitions.reduce(0) { $0 + $1.count } }

    /// Whether the automaton accepts exactly this word sequence.
    public func accepts(_ sentence: [String]) -> Bool {
        var state = start
        for word in sentence {
            guard let w = wordIndex[word], let next = transitions[state][w] else { return false }
            state = next
        }
        return isFinal[state]
    }

    /// The automaton in PocketSphinx's FSG text format (`fsg_model_readfile`): one extra final state that
    /// every accepting state reaches by a null transition, every transition with probability 1.
    ///
    /// With `loop`, a path beside the sentences: one more state, entered from the start state and left for the final
    /// state by null transitions, that loops over each of `loop.words` with probability `loop.probability` (the
    /// recogniser's branch for speech that is none of the sentences, HarkSpeech's `OtherSpeech`).
    ///
    /// With `otherValue`, every transition labelled `SpeechGrammar.otherValueWord` becomes a state of its own that is
    /// entered by one of `otherValue.words`, loops over them and is left by a null transition, each word at
    /// `otherValue.probability`: at least one phone in a value's place (HarkSpeech's `OtherValue`).
    public func fsg(name: String, loop: (words: [String], probability: Double)? = nil,
                    otherValue: (words: [String], probability: Double)? = nil) -> String {
        let final = stateCount
        var next = stateCount + 1
        var body: [String] = []
        /// One transition from `from` to `to` for each of `loop.words`, at its probability.
        func each(_ loop: (words: [String], probability: Double), from: Int, to: Int) -> [String] {
            loop.words.map { "TRANSITION \(from) \(to) \(loop.probability) \($0)" }
        }
        for (state, edges) in transitions.enumerated() {
            for (word, target) in edges.inLabelOrder {
                if let otherValue, words[word] == SpeechGrammar.otherValueWord {
                    let looping = next
                    next += 1
                    body += each(otherValue, from: state, to: looping) + each(otherValue, from: looping, to: looping)
                    body.append("TRANSITION \(looping) \(target) 1.0")
                } else {
                    body.append("TRANSITION \(state) \(target) 1.0 \(words[word])")
                }
            }
            if isFinal[state] { body.append("TRANSITION \(state) \(final) 1.0") }
        }
        if let loop {
            let looping = next
            next += 1
            body.append("TRANSITION \(start) \(looping) 1.0")
            body += each(loop, from: looping, to: looping)
            body.append("TRANSITION \(looping) \(final) 1.0")
        }
        let lines = ["FSG_BEGIN \(name)", "NUM_STATES \(next)", "START_STATE \(start)", "FINAL_STATE \(final)"] + body + ["FSG_END"]
        return lines.joined(separator: "\n") + "\n"
    }
}

extension WordAutomaton {
    /// Builds automata over one shared word table, each rule once.
    struct Builder {
        let rules: [String: [[SpeechGrammar.Element]]]
        var words: [String] = []
        var wordIndex: [String: Int] = [:]
        var compiled: [String: WordAutomaton] = [:]
        var inProgress: Set<String> = []

        init(rules: [String: [[SpeechGrammar.Element]]]) { self.rules = rules }

        mutating func word(_ w: String) -> Int {
            if let i = wordIndex[w] { return i }
            words.append(w)
            wordIndex[w] = words.count - 1
            return words.count - 1
        }

        mutating func automaton(of graph: GrammarGraph) throws(Failure) -> WordAutomaton {
            var nfa = NFA()
            let states = graph.nodes.map { _ in nfa.addState() }
            for (index, node) in graph.nodes.enumerated() {
                if node.isFinal { nfa.finals.insert(states[index]) }
                for edge in node.edges { try connect(&nfa, from: states[index], to: states[edge.target], by: edge.element) }
            }
            return nfa.minimalAutomaton(start: states[graph.start], words: words)
        }

        mutating func rule(_ name: String) throws(Failure) -> WordAutomaton {
            if let known = compiled[name] { return known }
            guard let alternatives = rules[name] else { throw .undefinedRule(name) }
            guard inProgress.insert(name).inserted else { throw .recursiveRule(name) }
            defer { inProgress.remove(name) }
            var nfa = NFA()
            let start = nfa.addState(), end = nfa.addState()
            nfa.finals.insert(end)
            for alternative in alternatives {
                var current = start
                if alternative.isEmpty { nfa.epsilon(start, end) }
                for (i, element) in alternative.enumerated() {
                    let next = i == alternative.count - 1 ? end : nfa.addState()
                    try connect(&nfa, from: current, to: next, by: element)
                    current = next
                }
            }
            let automaton = nfa.minimalAutomaton(start: start, words: words)
            compiled[name] = automaton
            return automaton
        }

        /// Adds the transitions that read `element` from `from` to `to`: one word, or a copy of a rule's automaton.
        mutating func connect(_ nfa: inout NFA, from: Int, to: Int, by element: SpeechGrammar.Element) throws(Failure) {
            switch element {
            case .word(let w):
                nfa.add(from, word(w), to)
            case .rule(let name):
                let sub = try rule(name)
                let base = nfa.transitions.count
                for _ in 0..<sub.stateCount { _ = nfa.addState() }
                for (state, edges) in sub.transitions.enumerated() {
                    // The sub-automaton's labels index the same word table (it was built by this builder).
                    for (w, target) in edges.inLabelOrder { nfa.add(base + state, w, base + target) }
                    if sub.isFinal[state] { nfa.epsilon(base + state, to) }
                }
                nfa.epsilon(from, base + sub.start)
            }
        }
    }

    /// A nondeterministic automaton with null moves, as the builder assembles it.
    struct NFA {
        var transitions: [[(word: Int, target: Int)]] = []
        var nulls: [[Int]] = []
        var finals: Set<Int> = []

        mutating func addState() -> Int {
            transitions.append([])
            nulls.append([])
            return transitions.count - 1
        }

        mutating func add(_ from: Int, _ word: Int, _ to: Int) { transitions[from].append((word, to)) }
        mutating func epsilon(_ from: Int, _ to: Int) { nulls[from].append(to) }

        func closure(_ states: [Int]) -> [Int] {
            var seen = Set(states)
            var stack = states
            while let s = stack.popLast() {
                for t in nulls[s] where seen.insert(t).inserted { stack.append(t) }
            }
            return seen.sorted()
        }

        /// Subset construction, then merging of equal states. The languages here are finite, so the
        /// deterministic automaton is acyclic and states can be merged from the final ones back.
        func minimalAutomaton(start: Int, words: [String]) -> WordAutomaton {
            var subsets: [[Int]] = [closure([start])]
            var index: [[Int]: Int] = [subsets[0]: 0]
            var dfa: [[Int: Int]] = []
            var queue = 0
            while queue < subsets.count {
                var moves: [Int: [Int]] = [:]
                for s in subsets[queue] { for (w, t) in transitions[s] { moves[w, default: []].append(t) } }
                var edges: [Int: Int] = [:]
                for (w, targets) in moves.inLabelOrder {
                    let subset = closure(targets)
                    if let known = index[subset] {
                        edges[w] = known
                    } else {
                        subsets.append(subset)
                        index[subset] = subsets.count - 1
                        edges[w] = subsets.count - 1
                    }
                }
                dfa.append(edges)
                queue += 1
            }
            let finalFlags = subsets.map { $0.contains { finals.contains($0) } }

            // Merge states with the same finality and transitions, targets first (post-order over an acyclic graph).
            struct Signature: Hashable { var isFinal: Bool; var edges: [Int] }
            var canonical = [Int](repeating: -1, count: dfa.count)
            var bySignature: [Signature: Int] = [:]
            var outTransitions: [[Int: Int]] = []
            var outFinal: [Bool] = []
            var order: [(state: Int, expanded: Bool)] = [(0, false)]
            while let (state, expanded) = order.popLast() {
                if canonical[state] >= 0 { continue }
                if !expanded {
                    order.append((state, true))
                    for (_, target) in dfa[state].inLabelOrder where canonical[target] < 0 { order.append((target, false)) }
                    continue
                }
                let edges = dfa[state].inLabelOrder.map { ($0.key, canonical[$0.value]) }
                let signature = Signature(isFinal: finalFlags[state], edges: edges.flatMap { [$0.0, $0.1] })
                if let known = bySignature[signature] {
                    canonical[state] = known
                } else {
                    outTransitions.append(Dictionary(uniqueKeysWithValues: edges))
                    outFinal.append(finalFlags[state])
                    bySignature[signature] = outTransitions.count - 1
                    canonical[state] = outTransitions.count - 1
                }
            }
            return WordAutomaton(words: words, transitions: outTransitions, isFinal: outFinal, start: canonical[0])
        }
    }
}

private extension Dictionary where Key == Int {
    /// The entries in the order of their word labels, never in the dictionary's own order, which Swift's per-process
    /// hash seed changes from run to run (`WordAutomaton`'s documentation says why the order matters).
    var inLabelOrder: [(key: Int, value: Value)] { sorted { $0.key < $1.key } }
}
