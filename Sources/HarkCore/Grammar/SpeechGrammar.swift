import Foundation

/// What a recogniser may hear for one workspace: every intent example as a sequence of words and entity
/// rules, factored into a small graph, with the vocabulary, a JSGF rendering (`jsgf`) and a trigram language
/// model over the same sentences (`arpaLanguageModel()`).
///
/// How an example becomes a template:
/// - the text is normalised by `SpeechText` (lower case, punctuation dropped, digits spelled out);
/// - annotated mentions (`IntentExample.mentions`) of dictionary entities become that entity's rule; an
///   example without mentions has the longest occurrences of dictionary values and synonyms replaced instead;
/// - with `@sys-number` enabled, numbers written in digits (and `sys-number` mentions) become the number rule
///   (`zero` … `ninety nine`, hundreds, thousands);
/// - pattern and other system entities (dates, times) stay as the words the example used: their values
///   cannot be listed.
/// `withCourtesy()` gives the same grammar with each template also opened by "could you", "can you", "would you" or
/// "please" and closed by "please", unless it already is (`Courtesy`).
/// Counterexamples are not part of the grammar.
public struct SpeechGrammar: Sendable {
    /// One token of a template or rule: a word, or a reference to a rule by name.
    public enum Element: Hashable, Sendable, Comparable {
        case word(String)
        case rule(String)
    }

    /// The top-level sentences, deduplicated, in workspace order.
    public private(set) var templates: [[Element]]
    /// Rules by name: each a list of alternatives; an alternative may refer to other rules (no recursion).
    public private(set) var rules: [String: [[Element]]]
    /// Every word the grammar can produce, sorted.
    public private(set) var vocabulary: [String]
    /// The templates minimised into a graph (shared prefixes and suffixes merged): what `jsgf` renders.
    public let graph: GrammarGraph

    /// The rule name the number system entity gets.
    public static let numberRule = "sys_number"

    /// A grammar over `templates` (word and rule sequences) and `rules`.
    public init(templates: [[Element]], rules: [String: [[Element]]]) {
        var seen: Set<[Element]> = []
        self.templates = templates.filter { !$0.isEmpty && seen.insert($0).inserted }
        self.rules = rules
        var words: Set<String> = []
        for template in self.templates { for case .word(let w) in template { words.insert(w) } }
        for alternatives in rules.values { for a in alternatives { for case .word(let w) in a { words.insert(w) } } }
        vocabulary = words.sorted()
        graph = GrammarGraph(sentences: self.templates)
    }

    /// The words people put around a request in English without changing what it asks: "could you", "can you",
    /// "would you" and "please" before it, "please" after it. A workspace shows a command's words once or twice with
    /// them and mostly without; a grammar of the examples alone then hears "could you turn the lamp on please" as the
    /// nearest example, which is often another command's. Kept to these few: each word more is more paths for
    /// near-commands and, since PocketSphinx scores each frame against the best senone of the paths it keeps, a
    /// lower margin for the examples said as written ("hey", "now", "for me" and "right now" were measured too:
    /// docs/speech.md, "Courtesy words").
    public enum Courtesy {
        /// The rule a template may open with.
        public static let openRule = "courtesy_open"
        /// The rule a template may close with.
        public static let closeRule = "courtesy_close"
        /// What may come before an example, one of them at most.
        public static let openers: [[String]] = [["could", "you"], ["can", "you"], ["would", "you"], ["please"]]
        /// What may come after an example, one of them at most.
        public static let closers: [[String]] = [["please"]]

        /// Whether a recogniser gives `workspace` the courtesy words: when it has two intents with examples or more. A
        /// one-intent workspace of orders writes its openings into its examples, has no other command to mistake a
        /// request for, and with the words let more near-commands through (docs/speech.md, "Courtesy words").
        public static func applies(to workspace: Workspace) -> Bool {
            workspace.hasSeveralCommands
        }

        /// `template` alone, and with an opener and a closer where it has none of its own: up to four templates.
        static func variants(of template: [Element]) -> [[Element]] {
            let words = template.map { element -> String? in if case .word(let w) = element { w } else { nil } }
            let opens = !openers.contains { o in words.count >= o.count && zip(words, o).allSatisfy { $0 == $1 } }
            let closes = !closers.contains { c in words.count >= c.count && zip(words.suffix(c.count), c).allSatisfy { $0 == $1 } }
            var result = [template]
            if opens { result.append([.rule(openRule)] + template) }
            if closes { result.append(template + [.rule(closeRule)]) }
            if opens, closes { result.append([.rule(openRule)] + template + [.rule(closeRule)]) }
            return result
        }
    }

    /// This grammar with its templates also said with courtesy words around them (`Courtesy`). The rule names are
    /// reserved by `init(workspace:)`, so no entity's rule is replaced.
    public func withCourtesy() -> SpeechGrammar {
        guard !templates.isEmpty else { return self }
        var rules = rules
        rules[Courtesy.openRule] = Courtesy.openers.map { $0.map(Element.word) }
        rules[Courtesy.closeRule] = Courtesy.closers.map { $0.map(Element.word) }
        return SpeechGrammar(templates: templates.flatMap(Courtesy.variants(of:)), rules: rules)
    }

    /// The word that stands, in `withOtherValues()`, for speech in a value's place that is none of the entity's values.
    /// It is never spoken: `WordAutomaton.fsg(name:loop:otherValue:)` writes each transition it labels as a loop over
    /// the acoustic model's phones.
    public static let otherValueWord = "[other-value]"

    /// This grammar with each dictionary entity's place that follows a word of its template also taking
    /// `otherValueWord`, so that "turn on the fan" can be heard as "turn on the", then something none of the device's
    /// values fits (docs/speech.md, "A value none of the values fits"). A value that opens its template ("lights out")
    /// keeps its values only: there the loop would stand for the start of any utterance, which the branch for other
    /// speech already covers. The number and courtesy rules are left as they are.
    public func withOtherValues() -> SpeechGrammar {
        var rules = rules
        var open: [String: String] = [:]  // entity rule → the same rule with the other value
        var taken = Set(rules.keys)
        func opened(_ name: String) -> String {
            if let known = open[name] { return known }
            let rule = Self.uniqueRuleName(name + "_or_other", taken: &taken)
            rules[rule] = (rules[name] ?? []) + [[.word(Self.otherValueWord)]]
            open[name] = rule
            return rule
        }
        let isEntityRule = { (name: String) in
            !name.hasPrefix(Self.numberRule) && name != Courtesy.openRule && name != Courtesy.closeRule
        }
        let templates = templates.map { template in
            var seenWord = false
            return template.map { element -> Element in
                switch element {
                case .word:
                    seenWord = true
                    return element
                case .rule(let name):
                    return seenWord && isEntityRule(name) ? .rule(opened(name)) : element
                }
            }
        }
        return SpeechGrammar(templates: templates, rules: rules)
    }

    /// The grammar of `workspace`'s intent examples.
    public init(workspace: Workspace) {
        var rules: [String: [[Element]]] = [:]
        var ruleNames: [String: String] = [:]  // entity name → rule name
        var taken: Set<String> = Set(Self.numberRules().keys).union([Courtesy.openRule, Courtesy.closeRule])
        // Dictionary entities, each value and synonym as spoken words; the lookup finds them in unannotated text.
        var phrases: [[String]: String] = [:]  // words → entity name
        var longestPhrase = 0
        for entity in workspace.entities {
            var alternatives: [[String]] = []
            var seenAlternatives: Set<[String]> = []
            for value in entity.values {
                guard case .synonyms(let synonyms) = value.kind else { continue }
                for text in [value.value] + synonyms {
                    let words = SpeechText.words(text)
                    guard !words.isEmpty, seenAlternatives.insert(words).inserted else { continue }
                    alternatives.append(words)
                    if phrases[words] == nil { phrases[words] = entity.name }
                    longestPhrase = max(longestPhrase, words.count)
                }
            }
            guard !alternatives.isEmpty else { continue }
            let name = Self.uniqueRuleName(entity.name, taken: &taken)
            ruleNames[entity.name] = name
            rules[name] = alternatives.map { $0.map(Element.word) }
        }
        let numbers = workspace.systemEntities.contains("sys-number")
        var usesNumbers = false

        var templates: [[Element]] = []
        for intent in workspace.intents {
            for example in intent.examples {
                let tokens = SpeechText.tokens(example.text)
                var template: [Element] = []
                var i = 0
                // Mentions by start, those the grammar can hold (dictionary entities and numbers).
                let mentions = example.mentions.filter {
                    ruleNames[$0.entity] != nil || (numbers && $0.entity == "sys-number")
                }.sorted { $0.start < $1.start }
                while i < tokens.count {
                    if let m = mentions.first(where: { $0.start <= tokens[i].start && tokens[i].start < $0.end }) {
                        let rule = m.entity == "sys-number" ? Self.numberRule : ruleNames[m.entity] ?? m.entity
                        if rule == Self.numberRule { usesNumbers = true }
                        template.append(.rule(rule))
                        while i < tokens.count, tokens[i].start < m.end { i += 1 }
                        continue
                    }
                    if mentions.isEmpty, longestPhrase > 0 {
                        var length = min(longestPhrase, tokens.count - i)
                        var found: String?
                        while length > 0 {
                            if let entity = phrases[tokens[i..<(i + length)].map(\.word)] {
                                found = entity
                                break
                            }
                            length -= 1
                        }
                        if let found, let rule = ruleNames[found] {
                            template.append(.rule(rule))
                            i += length
                            continue
                        }
                    }
                    if numbers, Self.isDigitToken(example.text, tokens[i]) {
                        // A number written in digits: every spoken word of it is one number rule.
                        let range = (tokens[i].start, tokens[i].end)
                        while i < tokens.count, (tokens[i].start, tokens[i].end) == range { i += 1 }
                        template.append(.rule(Self.numberRule))
                        usesNumbers = true
                        continue
                    }
                    template.append(.word(tokens[i].word))
                    i += 1
                }
                templates.append(template)
            }
        }
        if usesNumbers { rules.merge(Self.numberRules()) { a, _ in a } }
        self.init(templates: templates, rules: rules)
    }

    /// Whether the written token behind `token` is a number in digits (not "2nd", which reads as a word).
    static func isDigitToken(_ text: String, _ token: SpeechToken) -> Bool {
        let scalars = text.unicodeScalars
        let start = scalars.index(scalars.startIndex, offsetBy: token.start)
        let end = scalars.index(scalars.startIndex, offsetBy: token.end)
        return scalars[start..<end].allSatisfy { Tokenizer.isDigit($0) || $0 == "." || $0 == "," }
    }

    /// A JSGF-safe rule name for an entity, distinct from the ones already taken.
    static func uniqueRuleName(_ entity: String, taken: inout Set<String>) -> String {
        var base = String(String.UnicodeScalarView(entity.unicodeScalars.map {
            ($0.isASCII && (Tokenizer.isWordScalar($0))) ? $0 : "_"
        }))
        if base.isEmpty || Tokenizer.isDigit(base.unicodeScalars.first ?? "_") { base = "e_" + base }
        var name = base
        var k = 2
        while taken.contains(name) || name.hasPrefix("s_") {
            name = "\(base)_\(k)"
            k += 1
        }
        taken.insert(name)
        return name
    }

    /// The number rules: `sys_number` is 0–99, optionally with hundreds and thousands ("two hundred fifty",
    /// "three thousand", "one hundred and five"), or two to six digits read one by one ("zero eight eight
    /// five four"), optionally followed by "point" and one to three digits ("ninety seven point one").
    static func numberRules() -> [String: [[Element]]] {
        let w = Element.word
        let digit = Element.rule("sys_number_digit")
        let below100 = Element.rule("sys_number_99")
        let integer = Element.rule("sys_number_integer")
        var small: [[Element]] = SpeechText.ones.map { [w($0)] }
        for t in 2...9 {
            small.append([w(SpeechText.tens[t])])
            for o in 1...9 { small.append([w(SpeechText.tens[t]), w(SpeechText.ones[o])]) }
        }
        let hundreds: [[Element]] = [
            [below100, w("hundred")], [below100, w("hundred"), below100], [below100, w("hundred"), w("and"), below100],
        ]
        let thousands: [[Element]] = [
            [below100, w("thousand")], [below100, w("thousand"), .rule("sys_number_999")],
        ]
        let digitRuns: [[Element]] = (2...6).map { Array(repeating: digit, count: $0) }
        return [
            "sys_number_digit": SpeechText.ones.prefix(10).map { [w($0)] },
            "sys_number_99": small,
            "sys_number_999": [[below100]] + hundreds,
            "sys_number_integer": [[below100]] + hundreds + thousands + digitRuns + [[w("hundreds")], [w("thousands")]],
            numberRule: [[integer]] + (1...3).map { [integer, w("point")] + Array(repeating: digit, count: $0) },
        ]
    }

    // MARK: Language

    /// Whether the grammar generates exactly these words (checked on the factored graph, so it checks what
    /// `jsgf` renders).
    public func accepts(_ words: [String]) -> Bool {
        var memo: [String: [Int: Set<Int>]] = [:]
        return graph.ends(of: words, from: 0) { rule, start in ruleEnds(rule, words, start, &memo) }.contains(words.count)
    }

    /// Whether the grammar generates the spoken form of `text`.
    public func accepts(text: String) -> Bool { accepts(SpeechText.words(text)) }

    /// Where rule `name` can end when it starts at `start`.
    func ruleEnds(_ name: String, _ words: [String], _ start: Int, _ memo: inout [String: [Int: Set<Int>]]) -> Set<Int> {
        if let known = memo[name]?[start] { return known }
        memo[name, default: [:]][start] = []  // rules are not recursive; this only guards against a bad one
        var result: Set<Int> = []
        for alternative in rules[name] ?? [] {
            var positions: Set<Int> = [start]
            for element in alternative {
                var next: Set<Int> = []
                for p in positions {
                    switch element {
                    case .word(let w): if p < words.count, words[p] == w { next.insert(p + 1) }
                    case .rule(let r): next.formUnion(ruleEnds(r, words, p, &memo))
                    }
                }
                positions = next
                if positions.isEmpty { break }
            }
            result.formUnion(positions)
        }
        memo[name, default: [:]][start] = result
        return result
    }
}
