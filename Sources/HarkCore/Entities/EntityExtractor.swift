import Foundation

/// Finds dictionary and pattern entities of a workspace in a sentence.
///
/// Dictionary values and synonyms are matched on whole words, longest first, through a word trie. With
/// `fuzzy_match` an input word that the workspace never uses may match a synonym word by its stem or by one
/// edit (insertion, deletion, substitution or transposition) when both are at least five letters long, with
/// a lower confidence. Patterns are regular expressions run on the original text, as Watson does.
public struct EntityExtractor: Sendable {
    struct Target: Sendable {
        var entity: String
        var value: String
        var metadata: JSONValue?
    }

    /// A word trie node; `targets` are the values whose synonym ends here.
    final class TrieNode: @unchecked Sendable {
        // Built once in init and never mutated afterwards, hence safe to share.
        var children: [String: TrieNode] = [:]
        var targets: [Target] = []
    }

    struct Pattern: @unchecked Sendable {
        // NSRegularExpression is immutable after creation and documented as thread-safe.
        var entity: String
        var value: String
        var regex: NSRegularExpression
    }

    let root = TrieNode()
    let fuzzyEntities: Set<String>
    /// For fuzzy matching: stem → synonym words, and single-deletion variants → synonym words.
    let stemIndex: [String: [String]]
    let deletionIndex: [String: [String]]
    /// Words that occur anywhere in the workspace's examples or synonyms are never fuzzily re-read as another word.
    let vocabulary: Set<String>
    let patterns: [Pattern]
    let system: SystemEntityExtractor

    public init(workspace: Workspace) {
        var stemIndex: [String: [String]] = [:]
        var deletionIndex: [String: [String]] = [:]
        var vocabulary: Set<String> = []
        var patterns: [Pattern] = []
        var fuzzy: Set<String> = []
        for intent in workspace.intents {
            for example in intent.examples { for t in Tokenizer.tokenize(example.text) { vocabulary.insert(t.text) } }
        }
        for entity in workspace.entities {
            if entity.fuzzyMatch { fuzzy.insert(entity.name) }
            for value in entity.values {
                switch value.kind {
                case .synonyms(let synonyms):
                    for phrase in [value.value] + synonyms {
                        let words = Tokenizer.tokenize(phrase).map(\.text)
                        guard !words.isEmpty else { continue }
                        var node = root
                        for w in words {
                            vocabulary.insert(w)
                            if let next = node.children[w] {
                                node = next
                            } else {
                                let next = TrieNode()
                                node.children[w] = next
                                node = next
                            }
                            if entity.fuzzyMatch, w.unicodeScalars.count >= 5 {
                                stemIndex[Tokenizer.stem(w), default: []].append(w)
                                for d in Self.deletions(of: w) { deletionIndex[d, default: []].append(w) }
                                deletionIndex[w, default: []].append(w)
                            }
                        }
                        if !node.targets.contains(where: { $0.entity == entity.name && $0.value == value.value }) {
                            node.targets.append(Target(entity: entity.name, value: value.value, metadata: value.metadata))
                        }
                    }
                case .patterns(let list):
                    for p in list {
                        // The loader has already rejected invalid patterns.
                        if let regex = try? NSRegularExpression(pattern: p, options: [.caseInsensitive]) {
                            patterns.append(Pattern(entity: entity.name, value: value.value, regex: regex))
                        }
                    }
                }
            }
        }
        self.stemIndex = stemIndex.mapValues { Array(Set($0)) }
        self.deletionIndex = deletionIndex.mapValues { Array(Set($0)) }
        self.vocabulary = vocabulary
        self.patterns = patterns
        self.fuzzyEntities = fuzzy
        self.system = SystemEntityExtractor(enabled: workspace.systemEntities)
    }

    static func deletions(of word: String) -> [String] {
        let s = Array(word.unicodeScalars)
        return s.indices.map { i in
            var v = String.UnicodeScalarView()
            v.append(contentsOf: s[..<i])
            v.append(contentsOf: s[(i + 1)...])
            return String(v)
        }
    }

    /// Synonym words an input word may stand for under fuzzy matching, with a confidence; the word itself first.
    func candidates(for word: String) -> [(String, Double)] {
        var out: [(String, Double)] = [(word, 1)]
        guard !fuzzyEntities.isEmpty, word.unicodeScalars.count >= 5, !vocabulary.contains(word) else { return out }
        for w in stemIndex[Tokenizer.stem(word)] ?? [] where w != word { out.append((w, 0.9)) }
        var seen = Set(out.map(\.0))
        for key in [word] + Self.deletions(of: word) {
            for w in deletionIndex[key] ?? [] where seen.insert(w).inserted {
                if Self.withinOneEdit(word, w) { out.append((w, 0.8)) }
            }
        }
        return out
    }

    /// Damerau–Levenshtein distance ≤ 1.
    static func withinOneEdit(_ a: String, _ b: String) -> Bool {
        let x = Array(a.unicodeScalars)
        let y = Array(b.unicodeScalars)
        if abs(x.count - y.count) > 1 { return false }
        var i = 0
        while i < min(x.count, y.count), x[i] == y[i] { i += 1 }
        if x.count == y.count {
            if i == x.count { return true }
            if x[(i + 1)...].elementsEqual(y[(i + 1)...]) { return true }
            return i + 1 < x.count && x[i] == y[i + 1] && x[i + 1] == y[i] && x[(i + 2)...].elementsEqual(y[(i + 2)...])
        }
        return x.count > y.count ? x[(i + 1)...].elementsEqual(y[i...]) : x[i...].elementsEqual(y[(i + 1)...])
    }

    /// All entities in `text`, sorted by position. `tokens` must be `Tokenizer.tokenize(text)`.
    public func extract(from text: String, tokens: [Token], now: Date = Date(), timeZone: TimeZone = .current) -> [EntityMatch] {
        var found: [EntityMatch] = []
        let scalars = text.unicodeScalars
        func literal(_ start: Int, _ end: Int) -> String {
            let a = scalars.index(scalars.startIndex, offsetBy: start)
            let b = scalars.index(a, offsetBy: end - start)
            return String(scalars[a..<b])
        }
        // Dictionary entities: longest match per entity starting at each word.
        if !root.children.isEmpty {
            var coveredUntil: [String: Int] = [:]  // per entity: no overlapping matches of the same entity
            for i in tokens.indices {
                var best: [String: (end: Int, target: Target, confidence: Double)] = [:]
                // Walk the trie allowing each word its fuzzy candidates; keep the minimum confidence along the path.
                var frontier: [(TrieNode, Double)] = [(root, 1)]
                var j = i
                while j < tokens.count, !frontier.isEmpty {
                    var next: [(TrieNode, Double)] = []
                    let cands = candidates(for: tokens[j].text)
                    for (node, conf) in frontier {
                        for (word, c) in cands {
                            guard let child = node.children[word] else { continue }
                            let confidence = min(conf, c)
                            next.append((child, confidence))
                            for t in child.targets where c == 1 || fuzzyEntities.contains(t.entity) {
                                if let b = best[t.entity], b.end > j || (b.end == j && b.confidence >= confidence) { continue }
                                best[t.entity] = (j, t, confidence)
                            }
                        }
                    }
                    frontier = next
                    j += 1
                }
                for (entity, m) in best {
                    if let until = coveredUntil[entity], until > i { continue }
                    coveredUntil[entity] = m.end + 1
                    let start = tokens[i].start
                    let end = tokens[m.end].end
                    found.append(
                        EntityMatch(
                            entity: entity, value: m.target.value, start: start, end: end, confidence: m.confidence,
                            literal: literal(start, end), metadata: m.target.metadata?.objectValue))
                }
            }
        }
        found = Self.droppingNestedMatches(found)
        // Pattern entities on the original text.
        if !patterns.isEmpty {
            let ns = text as NSString
            let whole = NSRange(location: 0, length: ns.length)
            for p in patterns {
                for m in p.regex.matches(in: text, range: whole) where m.range.length > 0 {
                    let start = Self.scalarOffset(text, utf16: m.range.location)
                    let end = Self.scalarOffset(text, utf16: m.range.location + m.range.length)
                    var groups: [JSONValue] = []
                    for g in 0..<m.numberOfRanges where m.range(at: g).location != NSNotFound {
                        let r = m.range(at: g)
                        groups.append(
                            .object(
                                JSONObject([
                                    ("group", .string("group_\(g)")),
                                    ("location", .array([.number(Double(Self.scalarOffset(text, utf16: r.location))), .number(Double(Self.scalarOffset(text, utf16: r.location + r.length)))])),
                                ])))
                    }
                    found.append(
                        EntityMatch(
                            entity: p.entity, value: p.value, start: start, end: end, confidence: 1, literal: ns.substring(with: m.range),
                            groups: groups))
                }
            }
        }
        found.append(contentsOf: system.extract(from: text, now: now, timeZone: timeZone))
        found.sort { ($0.start, $1.end, $0.entity) < ($1.start, $0.end, $1.entity) }
        return found
    }

    /// Drops a dictionary match lying strictly inside a longer, at least as confident match of another
    /// entity: in "a medium roast large latte" the words "medium roast" are the roast, and reading their
    /// "medium" as a size as well would hand a dialog (or a slot-filling client taking the first `@size`)
    /// the wrong size. Matches of the same span, or partly overlapping, are all kept, as Watson keeps them.
    static func droppingNestedMatches(_ matches: [EntityMatch]) -> [EntityMatch] {
        matches.filter { m in
            !matches.contains { n in
                n.entity != m.entity && n.start <= m.start && n.end >= m.end && n.end - n.start > m.end - m.start
                    && n.confidence >= m.confidence
            }
        }
    }

    static func scalarOffset(_ text: String, utf16 offset: Int) -> Int {
        let u = text.utf16
        guard let idx = u.index(u.startIndex, offsetBy: offset, limitedBy: u.endIndex) else { return text.unicodeScalars.count }
        return text.unicodeScalars.distance(from: text.unicodeScalars.startIndex, to: idx)
    }
}
