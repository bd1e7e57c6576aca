import Foundation

/// A small fitted neural network: one hidden layer of `tanh` units and a linear output, a log-odds. Hark's two
/// learnt models are ensembles of these (`TanhEnsemble`): the matcher's confidence (`ConfidenceModel`) and the wake
/// verifier (HarkSpeech's `WakeVerifier`).
public struct TanhNetwork: Sendable {
    /// One row per hidden unit, one weight per (standardised) input.
    public let hiddenWeights: [[Double]]
    public let hiddenBias: [Double]
    public let outputWeights: [Double]
    public let outputBias: Double

    public init(hiddenWeights: [[Double]], hiddenBias: [Double], outputWeights: [Double], outputBias: Double) {
        self.hiddenWeights = hiddenWeights
        self.hiddenBias = hiddenBias
        self.outputWeights = outputWeights
        self.outputBias = outputBias
    }

    /// The output for standardised inputs `x`.
    public func logOdds(_ x: [Double]) -> Double {
        var z = outputBias
        for h in hiddenBias.indices {
            var a = hiddenBias[h]
            let row = hiddenWeights[h]
            for i in x.indices { a += row[i] * x[i] }
            z += outputWeights[h] * tanh(a)
        }
        return z
    }
}

/// Networks fitted on the same data from different random starts, sharing one standardisation of their inputs:
/// the probability is the logistic of their mean log-odds (one network's answer where the fit saw little depends
/// on its random start, the mean of several much less).
public struct TanhEnsemble: Sendable {
    /// Each input's mean and scale (standard deviation) in the fit data.
    public let mean: [Double]
    public let scale: [Double]
    public let networks: [TanhNetwork]

    public init(mean: [Double], scale: [Double], networks: [TanhNetwork]) {
        self.mean = mean
        self.scale = scale
        self.networks = networks
    }

    /// The probability for raw (unstandardised) `inputs`, in the order the networks were fitted on.
    public func probability(_ inputs: [Double]) -> Double {
        let x = inputs.indices.map { (inputs[$0] - mean[$0]) / scale[$0] }
        var z = 0.0
        for network in networks { z += network.logOdds(x) }
        return 1 / (1 + exp(-z / Double(max(networks.count, 1))))
    }
}
