import Foundation
import Testing

@testable import HarkSpeech

/// The wake verifier's features and model file (docs/wake-phrase.md, "The verifier").
@Suite("Wake verifier")
struct WakeVerifierTests {
    static let length = WakeFeatures.leadSamples + WakeFeatures.tailSamples

    @Test("The FFT agrees with a direct Fourier transform")
    func fftMatchesTheDefinition() {
        var generator = SystemRandomNumberGenerator()
        let n = 64
        let input = (0..<n).map { _ in Double.random(in: -1...1, using: &generator) }
        var real = input
        var imaginary = [Double](repeating: 0, count: n)
        WakeFeatures.fft(&real, &imaginary)
        for k in 0..<n {
            var (re, im) = (0.0, 0.0)
            for t in 0..<n {
                let angle = -2 * Double.pi * Double(k * t) / Double(n)
                re += input[t] * cos(angle)
                im += input[t] * sin(angle)
            }
            #expect(abs(re - real[k]) < 1e-9 && abs(im - imaginary[k]) < 1e-9, "bin \(k)")
        }
    }

    @Test("A tone lands in the mel band around its frequency, and silence in none")
    func aToneLandsInItsBand() {
        let tone = (0..<Self.length).map { Int16((sin(2 * Double.pi * 1_000 * Double($0) / 16_000) * 8_000).rounded()) }
        let spectrogram = WakeFeatures.logMel(tone)
        #expect(spectrogram.count == WakeFeatures.frameCount * WakeFeatures.bands)
        // The band whose triangle weighs the 1 kHz bin most.
        let bin = 1_000 * WakeFeatures.fftSize / 16_000
        let expected = (0..<WakeFeatures.bands).max { a, b in
            (WakeFeatures.filters[a].first { $0.0 == bin }?.1 ?? 0) < (WakeFeatures.filters[b].first { $0.0 == bin }?.1 ?? 0)
        }
        for frame in [0, 20, WakeFeatures.frameCount - 1] {
            let row = spectrogram[(frame * WakeFeatures.bands)..<((frame + 1) * WakeFeatures.bands)]
            #expect(row.indices.max { row[$0] < row[$1] }.map { $0 - frame * WakeFeatures.bands } == expected)
        }
        let silence = WakeFeatures.logMel([Int16](repeating: 0, count: Self.length))
        #expect(silence.allSatisfy { $0 == Float(log(1e-8)) })
    }

    /// A verifier file with one network whose only non-zero weight reads the keyphrase score.
    static func file(networks: String? = nil, mean: Int? = nil) -> Data {
        let inputs = WakeVerifier.inputCount(pool: 5)
        let row = (0..<inputs).map { $0 == inputs - 1 ? "1" : "0" }.joined(separator: ",")
        let network = networks ?? #"[{"hidden_weights": [[\#(row)]], "hidden_bias": [0], "output_weights": [2], "output_bias": -1}]"#
        let means = [String](repeating: "0", count: mean ?? inputs).joined(separator: ",")
        let stds = [String](repeating: "1", count: inputs).joined(separator: ",")
        return Data(#"{"phrase": "Hey, Hark", "bands": 24, "frames": 50, "pool": 5, "mean": [\#(means)], "std": [\#(stds)], "networks": \#(network)}"#.utf8)
    }

    @Test("A model file computes the logistic of its networks' output over the standardised inputs")
    func probability() throws {
        let verifier = try WakeVerifier(data: Self.file(), source: "v.json")
        let flat = [Float](repeating: -3, count: WakeFeatures.frameCount * WakeFeatures.bands)
        for score in [-60.0, -10, 0, 5] {
            let p = verifier.probability(spectrogram: flat, weakestWordMargin: -2, seconds: 0.6, keyphraseScore: score)
            #expect(abs(p - 1 / (1 + exp(-(2 * tanh(score) - 1)))) < 1e-6, "keyphrase score \(score)")
        }
        // Inputs: each band's mean over the crop is taken away (a flat spectrogram is all zeros), the scalars clamped.
        let inputs = WakeVerifier.inputs(spectrogram: flat, pool: 5, weakestWordMargin: nil, seconds: 9, keyphraseScore: -100)
        #expect(inputs.count == WakeVerifier.inputCount(pool: 5))
        #expect(inputs.dropLast(3).allSatisfy { $0 == 0 })
        #expect(Array(inputs.suffix(3)) == [-20, 1.5, -60])
        // A ramp in time: band means removed, then runs of five frames averaged.
        var ramp = flat
        for frame in 0..<WakeFeatures.frameCount {
            for band in 0..<WakeFeatures.bands { ramp[frame * WakeFeatures.bands + band] = Float(frame) }
        }
        let pooled = WakeVerifier.inputs(spectrogram: ramp, pool: 5, weakestWordMargin: 0, seconds: 0.5, keyphraseScore: 0)
        // Frames 3..<53 have mean 27.5; the first run (frames 3...7) averages 5, so -22.5.
        #expect(abs(pooled[0] + 22.5) < 1e-4 && abs(pooled[WakeFeatures.bands - 1] + 22.5) < 1e-4)
        #expect(abs(pooled[9 * WakeFeatures.bands] - 22.5) < 1e-4)
    }

    @Test("A bad model file is an error naming the file and what is wrong")
    func badFiles() {
        let cases: [(Data, String)] = [
            (Data("[1]".utf8), "not a JSON object"),
            (Data(#"{"bands": 20, "frames": 50}"#.utf8), "phrase"),
            (Data(#"{"phrase": "hey hark", "bands": 20, "frames": 50}"#.utf8), "bands"),
            (Data(#"{"phrase": "hey hark", "bands": 24, "frames": 50, "pool": 3}"#.utf8), "pool"),
            (Self.file(mean: 7), "mean has 7 numbers"),
            (Self.file(networks: "[]"), "networks"),
            (Self.file(networks: #"[{"hidden_weights": [[1]], "hidden_bias": [0], "output_weights": [1], "output_bias": 0}]"#), "hidden_weights[0] has 1 numbers"),
        ]
        for (data, expected) in cases {
            do {
                _ = try WakeVerifier(data: data, source: "v.json")
                Issue.record("accepted a file that should fail with \(expected)")
            } catch {
                #expect(error.description.hasPrefix("v.json: wake verifier model: "))
                #expect(error.description.contains(expected), "\(error)")
            }
        }
        let missing = URL(fileURLWithPath: "/nonexistent/wake-verifier.json")
        do {
            _ = try WakeVerifier(contentsOf: missing)
            Issue.record("a missing file was accepted")
        } catch {
            #expect(error.description.hasPrefix("/nonexistent/wake-verifier.json: wake verifier model: cannot read it"), "\(error)")
        }
    }

    @Test("Settings that name a verifier need one, for the phrase it was trained on, and say so")
    func settingsNeedTheVerifier() throws {
        #expect(throws: WakeError.noVerifier("wake-verifier.json")) {
            try WakePhraseSpotter(phrase: "hey hark", settings: WakeSettings(verifier: "wake-verifier.json"))
        }
        let verifier = try WakeVerifier(data: Self.file(), source: "v.json")
        #expect(verifier.phrase == "hey hark")
        let settings = WakeSettings(phrase: "okay hark", verifier: "v.json")
        #expect(throws: WakeError.verifierForAnotherPhrase(verifier: "hey hark", phrase: "okay hark")) {
            try WakePhraseSpotter(phrase: settings.phrase, settings: settings, verifier: verifier)
        }
        #expect(WakeError.verifierForAnotherPhrase(verifier: "hey hark", phrase: "okay hark").description.contains("null"))
        // Without `verifier` in the settings, a verifier given is not used, whatever its phrase.
        _ = try WakePhraseSpotter(phrase: "okay hark", settings: WakeSettings(phrase: "okay hark"), verifier: verifier)
    }

    @Test("The shipped verifier loads, for the shipped phrase")
    func shippedVerifier() throws {
        let settings = try WakeSettings.load(from: WakeSettingsTests.shipped)
        let name = try #require(settings.verifier)
        let verifier = try WakeVerifier(contentsOf: WakeSettingsTests.shipped.deletingLastPathComponent().appendingPathComponent(name))
        #expect(verifier.phrase == settings.phrase)
        #expect(verifier.pool == 1 && verifier.model.networks.count == 3)
    }
}
