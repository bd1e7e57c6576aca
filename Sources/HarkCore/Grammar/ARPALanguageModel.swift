import Foundation

/// A trigram language model with Witten–Bell smoothing, written in the ARPA back-off format PocketSphinx
/// reads (`ps_set_lm_file`).
///
/// Witten–Bell interpolates each order with the next lower one, giving the lower order the weight
/// `T(h) / (c(h) + T(h))` where `T(h)` is how many different words followed history `h`. The ARPA file stores
/// the interpolated probability of every seen n-gram and, per history, the back-off weight that makes each
/// conditional distribution sum to one over the vocabulary. Unigrams are interpolated with a uniform
/// distribution, so every vocabulary word keeps some probability.
public struct ARPALanguageModel: Sendable {
    public static let sentenceStart = "<s>"
    public static let sentenceEnd = "</s>"

    /// log10 probability and back-off weight (`nil` for the highest order) of each n-gram, by order.
    public private(set) var ngrams: [[[String]: (probability: Double, backoff: Double?)]]

    /// The model of `sentences` (each a list of words, without sentence markers).
    public init(sentences: [[String]]) {
        let order = 3
        // counts[k][ngram] for n-grams of length k+1 over padded sentences.
        var counts: [[[String]: Int]] = Array(repeating: [:], count: order)
        for sentence in sentences where !sentence.isEmpty {
            let padded = [Self.sentenceStart] + sentence + [Self.sentenceEnd]
            for i in 1..<padded.count {  // <s> is never predicted
                for k in 0..<order where i - k >= 0 {
                    counts[k][Array(padded[(i - k)...i]), default: 0] += 1
                }
            }
        }
        // History totals and distinct followers.
        var historyCount: [[String]: Int] = [:]
        var followers: [[String]: Int] = [:]
        for k in 0..<order {
            for (ngram, c) in counts[k] {
                let history = Array(ngram.dropLast())
                historyCount[history, default: 0] += c
                followers[history, default: 0] += 1
            }
        }
        let vocabulary = counts[0].keys.map { $0[0] }
        let uniform = 1.0 / Double(max(1, vocabulary.count))

        // Interpolated probabilities, order by order.
        var probability: [[[String]: Double]] = Array(repeating: [:], count: order)
        func lower(_ ngram: [String], _ k: Int) -> Double {
            // Probability of the last word given the shorter history, backing off through unseen n-grams.
            if k < 0 { return uniform }
            if let p = probability[k][ngram] { return p }
            let history = Array(ngram.dropLast())
            let shorter = Array(ngram.dropFirst())
            guard let c = historyCount[history], let t = followers[history] else { return lower(shorter, k - 1) }
            return Double(t) / Double(c + t) * lower(shorter, k - 1)
        }
        for k in 0..<order {
            for (ngram, c) in counts[k] {
                let history = Array(ngram.dropLast())
                let total = Double(historyCount[history] ?? 0)
                let t = Double(followers[history] ?? 0)
                probability[k][ngram] = (Double(c) + t * lower(Array(ngram.dropFirst()), k - 1)) / (total + t)
            }
        }
        // Back-off weights: the mass left for unseen words, over the lower order's mass of those words.
        var seenMass: [[String]: (p: Double, lower: Double)] = [:]
        for k in 1..<order {
            for (ngram, p) in probability[k] {
                let history = Array(ngram.dropLast())
                let q = lower(Array(ngram.dropFirst()), k - 1)
                let old = seenMass[history] ?? (0, 0)
                seenMass[history] = (old.p + p, old.lower + q)
            }
        }
        var table: [[[String]: (probability: Double, backoff: Double?)]] = Array(repeating: [:], count: order)
        for k in 0..<order {
            for (ngram, p) in probability[k] {
                var backoff: Double? = nil
                if k < order - 1 {
                    if let mass = seenMass[ngram] {
                        backoff = log10(max(1e-12, 1 - mass.p) / max(1e-12, 1 - mass.lower))
                    } else {
                        backoff = 0
                    }
                }
                table[k][ngram] = (log10(p), backoff)
            }
        }
        // <s> starts sentences but is never predicted: ARPA convention gives it -99 and a back-off weight.
        let startMass = seenMass[[Self.sentenceStart]]
        table[0][[Self.sentenceStart]] = (-99, startMass.map { log10(max(1e-12, 1 - $0.p) / max(1e-12, 1 - $0.lower)) } ?? 0)
        ngrams = table
    }

    /// The model in ARPA text format.
    public var arpa: String {
        var out = "\\data\\\n"
        for (k, table) in ngrams.enumerated() { out += "ngram \(k + 1)=\(table.count)\n" }
        for (k, table) in ngrams.enumerated() {
            out += "\n\\\(k + 1)-grams:\n"
            for ngram in table.keys.sorted(by: { $0.lexicographicallyPrecedes($1) }) {
                guard let entry = table[ngram] else { continue }
                out += String(format: "%.6f", entry.probability) + "\t" + ngram.joined(separator: " ")
                if let backoff = entry.backoff { out += "\t" + String(format: "%.6f", backoff) }
                out += "\n"
            }
        }
        return out + "\n\\end\\\n"
    }

    /// log10 P(word | history) by the back-off rule, for checking the model.
    public func log10Probability(of word: String, after history: [String]) -> Double {
        let history = Array(history.suffix(ngrams.count - 1))
        if let entry = ngrams[history.count][history + [word]] { return entry.probability }
        guard !history.isEmpty else { return -99 }
        let backoff = ngrams[history.count - 1][history]?.backoff ?? 0
        return backoff + log10Probability(of: word, after: Array(history.dropFirst()))
    }

    /// The mean log10 probability per word of `words` as a sentence (from `<s>`, the sentence's end counted as a word):
    /// how much a word sequence reads like the sentences the model was made from. A word the model never saw scores
    /// -99 (as PocketSphinx's ARPA convention gives `<s>`), so one such word sinks the mean.
    public func log10ProbabilityPerWord(_ words: [String]) -> Double {
        var history = [Self.sentenceStart]
        var total = 0.0
        for word in words + [Self.sentenceEnd] {
            total += log10Probability(of: word, after: history)
            history.append(word)
        }
        return total / Double(words.count + 1)
    }
}

extension SpeechGrammar {
    /// A trigram model of the sentences the grammar generates (`sentences(perTemplate:)`), in ARPA format.
    public func arpaLanguageModel(perTemplate: Int = 200) -> String {
        trigramModel(perTemplate: perTemplate).arpa
    }

    /// The trigram model of the sentences the grammar generates (`sentences(perTemplate:)`).
    public func trigramModel(perTemplate: Int = 200) -> ARPALanguageModel {
        ARPALanguageModel(sentences: sentences(perTemplate: perTemplate))
    }
}
