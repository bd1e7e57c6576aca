import Foundation

/// A multinomial logistic-regression intent classifier, trained when a workspace loads.
///
/// Classes are the workspace's intents plus, when the workspace has counterexamples, an "irrelevant"
/// class learnt from them. Training is deterministic (fixed seed), so a workspace always yields the
/// same model. See `Matcher` for how its probabilities become Watson-style confidences.
struct IntentClassifier: Sendable {
    let classes: [String]
    let hasIrrelevantClass: Bool
    let featureIndex: [UInt64: Int32]
    /// Row-major `features × classes`.
    let weights: [Float]
    let bias: [Float]

    struct Sample {
        var features: [UInt64]
        var label: Int
        var weight: Float
    }

    static let irrelevantClass = "#irrelevant"

    /// Hyper-parameters were chosen by 3-fold cross-validation on the Snips *training* split (60 held-out
    /// examples per intent per fold), never on the validation sentences the benchmark reports.
    ///
    /// A tutorial-size workspace (a few dozen examples) gets more epochs, so that training sees at least
    /// `minimumUpdates` examples in all: 30 passes over 25 examples leave the weights too small to tell its
    /// intents apart with conviction, however distinct they are. Workspaces of 100 examples or more train as before.
    static let minimumUpdates = 3000

    init(intents: [String], samples: [Sample], hasIrrelevantClass: Bool, epochs minimumEpochs: Int = 30, l2: Float = 1e-3, learningRate lr0: Float = 1.0) {
        let epochs = samples.isEmpty ? 0 : max(minimumEpochs, min(400, (Self.minimumUpdates + samples.count - 1) / samples.count))
        let classes = hasIrrelevantClass ? intents + [Self.irrelevantClass] : intents
        let k = classes.count
        var index: [UInt64: Int32] = [:]
        var encoded: [(features: [Int32], label: Int, weight: Float)] = []
        encoded.reserveCapacity(samples.count)
        for s in samples {
            var f: [Int32] = []
            f.reserveCapacity(s.features.count)
            for h in s.features {
                if let i = index[h] {
                    f.append(i)
                } else {
                    let i = Int32(index.count)
                    index[h] = i
                    f.append(i)
                }
            }
            encoded.append((f, s.label, s.weight))
        }
        var w = [Float](repeating: 0, count: index.count * k)
        var b = [Float](repeating: 0, count: k)
        var logits = [Float](repeating: 0, count: k)
        var order = Array(encoded.indices)
        var rng = SplitMix64(seed: 0x4841_524B)  // "HARK"
        for epoch in 0..<epochs {
            // Fisher–Yates with a fixed seed: the same workspace always trains the same model.
            for i in stride(from: order.count - 1, to: 0, by: -1) {
                order.swapAt(i, Int(rng.next() % UInt64(i + 1)))
            }
            let lr: Float = lr0 / (1 + Float(epoch) * 0.15)
            for e in order {
                let (f, label, weight) = encoded[e]
                let x: Float = 1 / Float(f.count).squareRoot()
                for c in 0..<k { logits[c] = b[c] }
                for i in f {
                    let row = Int(i) * k
                    for c in 0..<k { logits[c] += w[row + c] * x }
                }
                Self.softmax(&logits)
                for c in 0..<k {
                    let g = (logits[c] - (c == label ? 1 : 0)) * weight
                    b[c] -= lr * g * 0.1
                    logits[c] = g
                }
                let decay = 1 - lr * l2
                for i in f {
                    let row = Int(i) * k
                    for c in 0..<k { w[row + c] = w[row + c] * decay - lr * logits[c] * x }
                }
            }
        }
        self.classes = classes
        self.hasIrrelevantClass = hasIrrelevantClass
        self.featureIndex = index
        self.weights = w
        self.bias = b
    }

    /// Class probabilities for a feature set (softmax over logits), plus how many features were known.
    func probabilities(_ features: [UInt64]) -> (probabilities: [Float], known: Int) {
        let k = classes.count
        var logits = bias
        var known = 0
        let x: Float = 1 / Float(max(features.count, 1)).squareRoot()
        for h in features {
            guard let i = featureIndex[h] else { continue }
            known += 1
            let row = Int(i) * k
            for c in 0..<k { logits[c] += weights[row + c] * x }
        }
        Self.softmax(&logits)
        return (logits, known)
    }

    /// The contribution of each known feature to each class's logit, for explanations.
    func contributions(_ features: [UInt64]) -> [(feature: Int, perClass: [Float])] {
        let k = classes.count
        let x: Float = 1 / Float(max(features.count, 1)).squareRoot()
        return features.enumerated().compactMap { n, h in
            guard let i = featureIndex[h] else { return nil }
            let row = Int(i) * k
            return (n, (0..<k).map { weights[row + $0] * x })
        }
    }

    static func softmax(_ v: inout [Float]) {
        var m = -Float.infinity
        for x in v where x > m { m = x }
        var sum: Float = 0
        for i in v.indices {
            v[i] = expf(v[i] - m)
            sum += v[i]
        }
        for i in v.indices { v[i] /= sum }
    }
}

/// A small, fast, seedable generator (SplitMix64) for deterministic training and reproducible choices.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    var state: UInt64
    public init(seed: UInt64) { state = seed }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
