import Foundation
import HarkCore

/// The third look at a keyphrase hit: a small neural network over the hit's log-mel spectrogram
/// (`WakeFeatures`) and the second pass's numbers, trained on synthetic voices that none of the evaluation's
/// voices are, saying the phrase and sentences that are not it, in generated noise (scripts/wake/
/// train_verifier.py writes `Models/wake-verifier.json`; docs/wake-phrase.md, "The verifier").
///
/// Its inputs: the `WakeFeatures.modelFrames` frames from `WakeFeatures.modelOffset` with each band's mean over
/// them subtracted (so the microphone's colouring and the level cancel), averaged over runs of `pool` frames
/// (the file's `pool`: 5 makes ten steps of 100 ms), then the weakest word's margin
/// (clamped to -20…10; -20 when the grammar found no path), the hit's length in seconds (up to 1.5) and the
/// keyphrase score (log10, clamped to -60…20). The networks (`TanhEnsemble`, as the matcher's confidence has
/// them) standardise each input by the file's `mean` and `std`; the probability is the logistic of their mean output.
public struct WakeVerifier: Sendable {
    /// The phrase it was trained on (normalised): it knows nothing of any other.
    public let phrase: String
    let pool: Int
    let model: TanhEnsemble
    static let scalarCount = 3
    static func inputCount(pool: Int) -> Int { WakeFeatures.modelFrames / pool * WakeFeatures.bands + scalarCount }

    /// Reads a verifier file; an unreadable or malformed one is an error naming the file and what is wrong.
    public init(contentsOf url: URL) throws(WakeSettingsError) {
        let data: Data
        do { data = try Data(contentsOf: url) } catch {
            throw .badVerifier(source: url.path, reason: "cannot read it: \((error as NSError).localizedDescription)")
        }
        try self.init(data: data, source: url.path)
    }

    init(data: Data, source: String) throws(WakeSettingsError) {
        func fail(_ reason: String) -> WakeSettingsError { .badVerifier(source: source, reason: reason) }
        guard let object = try? JSONSerialization.jsonObject(with: data), let root = object as? [String: Any] else {
            throw fail("not a JSON object")
        }
        func numbers(_ value: Any?, _ name: String, count: Int) throws(WakeSettingsError) -> [Double] {
            guard let list = value as? [Any] else { throw fail("\(name) is not a list of numbers") }
            let values = list.compactMap { ($0 as? NSNumber).map { $0.doubleValue } }
            guard values.count == list.count, values.allSatisfy(\.isFinite) else { throw fail("\(name) holds something that is not a finite number") }
            guard values.count == count else { throw fail("\(name) has \(values.count) numbers, expected \(count)") }
            return values
        }
        guard let phrase = root["phrase"] as? String, !WakePhraseSpotter.words(of: phrase).isEmpty else {
            throw fail("phrase is not the phrase it was trained on (a string of words)")
        }
        self.phrase = WakePhraseSpotter.words(of: phrase).joined(separator: " ")
        guard root["bands"] as? Int == WakeFeatures.bands, root["frames"] as? Int == WakeFeatures.modelFrames else {
            throw fail("made for \(root["bands"] ?? "?") bands × \(root["frames"] ?? "?") frames; this build computes \(WakeFeatures.bands) × \(WakeFeatures.modelFrames)")
        }
        guard let pool = root["pool"] as? Int, pool > 0, WakeFeatures.modelFrames % pool == 0 else {
            throw fail("pool must be a whole number of frames that divides \(WakeFeatures.modelFrames)")
        }
        self.pool = pool
        let inputs = Self.inputCount(pool: pool)
        let mean = try numbers(root["mean"], "mean", count: inputs)
        let std = try numbers(root["std"], "std", count: inputs)
        guard std.allSatisfy({ $0 > 0 }) else { throw fail("std has a value that is not positive") }
        guard let list = root["networks"] as? [[String: Any]], !list.isEmpty else { throw fail("networks is not a non-empty list of objects") }
        var networks: [TanhNetwork] = []
        for (index, network) in list.enumerated() {
            let name = "networks[\(index)]"
            guard let rows = network["hidden_weights"] as? [Any], !rows.isEmpty else { throw fail("\(name).hidden_weights is not a non-empty list") }
            var weights: [[Double]] = []
            for (row, values) in rows.enumerated() {
                weights.append(try numbers(values, "\(name).hidden_weights[\(row)]", count: inputs))
            }
            let bias = try numbers(network["hidden_bias"], "\(name).hidden_bias", count: rows.count)
            let output = try numbers(network["output_weights"], "\(name).output_weights", count: rows.count)
            guard let outputBias = (network["output_bias"] as? NSNumber)?.doubleValue, outputBias.isFinite else {
                throw fail("\(name).output_bias is not a number")
            }
            networks.append(TanhNetwork(hiddenWeights: weights, hiddenBias: bias, outputWeights: output, outputBias: outputBias))
        }
        model = TanhEnsemble(mean: mean, scale: std, networks: networks)
    }

    /// The probability that the hit is the phrase. `spectrogram` is `WakeFeatures.logMel`'s output.
    public func probability(spectrogram: [Float], weakestWordMargin: Double?, seconds: Double, keyphraseScore: Double) -> Double {
        model.probability(Self.inputs(spectrogram: spectrogram, pool: pool, weakestWordMargin: weakestWordMargin, seconds: seconds, keyphraseScore: keyphraseScore))
    }

    /// The network's input before standardisation (what scripts/wake/train_verifier.py computes from the
    /// evaluation's features).
    static func inputs(spectrogram: [Float], pool: Int, weakestWordMargin: Double?, seconds: Double, keyphraseScore: Double) -> [Double] {
        let bands = WakeFeatures.bands, frames = WakeFeatures.modelFrames
        let crop = spectrogram[(WakeFeatures.modelOffset * bands)..<((WakeFeatures.modelOffset + frames) * bands)].map { Double($0) }
        var means = [Double](repeating: 0, count: bands)
        for frame in 0..<frames {
            for band in 0..<bands { means[band] += crop[frame * bands + band] }
        }
        for band in 0..<bands { means[band] /= Double(frames) }
        var input = [Double](repeating: 0, count: frames / pool * bands)
        for frame in 0..<frames {
            for band in 0..<bands { input[frame / pool * bands + band] += (crop[frame * bands + band] - means[band]) / Double(pool) }
        }
        input.append(min(10, max(-20, weakestWordMargin ?? -20)))
        input.append(min(1.5, max(0, seconds)))
        input.append(min(20, max(-60, keyphraseScore)))
        return input
    }
}
