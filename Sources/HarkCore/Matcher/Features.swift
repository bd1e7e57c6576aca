import Foundation

/// Turns a tokenised sentence and its entities into the sparse binary features the classifier scores.
///
/// Features: each word's stem (`w:light`), each entity type found (`e:sys-time`), and bigrams over the
/// sentence with entity spans collapsed to their type and sentence boundaries marked
/// (`b:<s>|turn`, `b:the|@device`). Entity-type features let "turn on the heater" generalise from
/// "turn on the fan" when both are values of one entity. Features are hashed (FNV-1a, 64 bits);
/// names are built only when an explanation is asked for.
enum Features {
    static let offsetBasis: UInt64 = 0xcbf2_9ce4_8422_2325
    static let prime: UInt64 = 0x100_0000_01b3

    @inline(__always) static func hash(_ kind: UInt8, _ text: String, seed: UInt64 = offsetBasis) -> UInt64 {
        var h = seed ^ UInt64(kind)
        h = h &* prime
        for b in text.utf8 {
            h ^= UInt64(b)
            h = h &* prime
        }
        return h
    }

    /// One element of the sentence for bigrams: a word stem or an entity type.
    struct Unit {
        var text: String
        var isEntity: Bool
    }

    /// Entity spans used for features: non-overlapping, earliest first, longest at a position.
    static func spans(_ entities: [EntityMatch], tokens: [Token]) -> [(first: Int, last: Int, entity: String)] {
        var out: [(Int, Int, String)] = []
        var nextFree = 0
        for e in entities {
            guard let first = tokens.firstIndex(where: { $0.end > e.start }), tokens[first].start < e.end else { continue }
            var last = first
            while last + 1 < tokens.count, tokens[last + 1].start < e.end { last += 1 }
            if first < nextFree { continue }
            out.append((first, last, e.entity))
            nextFree = last + 1
        }
        return out
    }

    static func units(tokens: [Token], entities: [EntityMatch]) -> [Unit] {
        let spans = spans(entities, tokens: tokens)
        var units: [Unit] = []
        units.reserveCapacity(tokens.count)
        var s = 0
        var i = 0
        while i < tokens.count {
            if s < spans.count, spans[s].first == i {
                units.append(Unit(text: spans[s].entity, isEntity: true))
                i = spans[s].last + 1
                s += 1
            } else {
                units.append(Unit(text: tokens[i].stem, isEntity: false))
                i += 1
            }
        }
        return units
    }

    /// The hashed features of a sentence, deduplicated, with their names when `names` is set.
    static func extract(tokens: [Token], entities: [EntityMatch], names: Bool = false) -> (hashes: [UInt64], names: [String]) {
        var hashes: [UInt64] = []
        var labels: [String] = []
        hashes.reserveCapacity(tokens.count * 2 + 4)
        for t in tokens {
            hashes.append(hash(1, t.stem))
            if names { labels.append("w:\(t.stem)") }
        }
        var seenEntity: Set<String> = []
        for e in entities where seenEntity.insert(e.entity).inserted {
            hashes.append(hash(2, e.entity))
            if names { labels.append("e:@\(e.entity)") }
        }
        let units = units(tokens: tokens, entities: entities)
        var previous = hash(3, "<s>")
        var previousName = "<s>"
        for u in units {
            let uh = hash(u.isEntity ? 4 : 5, u.text)
            hashes.append(mix(previous, uh))
            if names {
                let n = u.isEntity ? "@\(u.text)" : u.text
                labels.append("b:\(previousName)|\(n)")
                previousName = n
            }
            previous = uh
        }
        if !units.isEmpty {
            hashes.append(mix(previous, hash(3, "</s>")))
            if names { labels.append("b:\(previousName)|</s>") }
        }
        // Word bigrams too where an entity span was collapsed: a value the entity does not list (a new song
        // title) then still meets the bigrams it was trained with.
        if units.contains(where: \.isEntity) {
            for k in 1..<tokens.count {
                hashes.append(mix(hash(5, tokens[k - 1].stem) ^ 0x5bd1_e995, hash(5, tokens[k].stem)))
                if names { labels.append("r:\(tokens[k - 1].stem)|\(tokens[k].stem)") }
            }
        }
        // Deduplicate, keeping the first name.
        var seen: Set<UInt64> = []
        var outH: [UInt64] = []
        var outN: [String] = []
        outH.reserveCapacity(hashes.count)
        for (k, h) in hashes.enumerated() where seen.insert(h).inserted {
            outH.append(h)
            if names { outN.append(labels[k]) }
        }
        return (outH, outN)
    }

    @inline(__always) static func mix(_ a: UInt64, _ b: UInt64) -> UInt64 {
        var h = a &* 0x9E37_79B9_7F4A_7C15
        h ^= b &+ 0x632B_E59B_D9B4_E019 &+ (h << 6) &+ (h >> 2)
        return h
    }
}
