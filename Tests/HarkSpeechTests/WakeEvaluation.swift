import Foundation
import HarkAudio
import Testing

@testable import HarkSpeech

/// The measurement behind docs/wake-phrase.md, run by `scripts/wake-eval.sh` (which makes the audio and
/// scores the output): it is skipped unless `HARK_WAKE_EVAL` names a manifest.
///
/// Manifest: `{"output": path, "runs": [{"name", "settings": {wake.json fields}, "chunk_samples",
/// "streams": [raw s16le 16 kHz paths], "record_features": false}]}`; with `record_features` each hit also
/// carries its `WakeFeatures` spectrogram (`"features"`, what scripts/wake/train_verifier.py learns from). Output, one JSON object a line: every keyphrase hit with both
/// scores, accepted or not (`"type": "hit"`), and per stream its length and processing time
/// (`"type": "stream"`).
@Suite("Wake evaluation")
struct WakeEvaluation {
    static let manifest = ProcessInfo.processInfo.environment["HARK_WAKE_EVAL"]

    @Test("Keyphrase hits and second-pass scores over the evaluation streams", .enabled(if: manifest != nil, "set HARK_WAKE_EVAL (scripts/wake-eval.sh)"))
    func evaluate() throws {
        let path = try #require(Self.manifest)
        let object = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path)))
        let manifest = try #require(object as? [String: Any], "manifest is not a JSON object")
        let output = try #require(manifest["output"] as? String, "manifest has no output")
        let runs = try #require(manifest["runs"] as? [[String: Any]], "manifest has no runs")
        try #require(FileManager.default.createFile(atPath: output, contents: nil), "cannot create \(output)")
        let file = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
        defer { try? file.close() }
        func write(_ line: [String: Any]) throws {
            file.write(try JSONSerialization.data(withJSONObject: line, options: [.sortedKeys]) + Data("\n".utf8))
        }
        for run in runs {
            let name = run["name"] as? String ?? "run"
            let settingsData = try JSONSerialization.data(withJSONObject: run["settings"] ?? [String: Any]())
            let settings = try WakeSettings.decode(settingsData, source: "\(path): run \(name)")
            let chunk = run["chunk_samples"] as? Int ?? 1_600
            var model = SpeechModel()
            if settings.noisyMeans {
                // The shipped means, as `hark run` finds them in the checkout.
                model.noisyMeans = RecognitionFixtures.packageRoot.appendingPathComponent("Models").appendingPathComponent(SpeechModel.noisyMeansFileName)
            }
            // The verifier named by the settings, from the checkout's Models/ (as `hark run` finds Models/wake.json's).
            let verifier = try settings.verifier.map {
                try WakeVerifier(contentsOf: RecognitionFixtures.packageRoot.appendingPathComponent("Models").appendingPathComponent($0))
            }
            let spotter = try WakePhraseSpotter(phrase: settings.phrase, model: model, settings: settings, verifier: verifier)
            spotter.recordsCandidates = true
            let recordsFeatures = run["record_features"] as? Bool ?? false
            for stream in run["streams"] as? [String] ?? [] {
                let audio = try AudioFile.read(stream, rawFormat: .speech)
                try spotter.reset()
                spotter.candidates.removeAll()
                let before = spotter.processingSeconds
                var offset = 0
                var accepted: [Double] = []
                while offset < audio.samples.count {
                    let piece = Array(audio.samples[offset..<min(audio.samples.count, offset + chunk)])
                    offset += piece.count
                    if let detection = try spotter.process(PCMBuffer(format: .speech, samples: piece)) { accepted.append(detection.time) }
                }
                for candidate in spotter.candidates {
                    var line: [String: Any] = [
                        "type": "hit", "run": name, "stream": stream, "start": WakePhraseSpotter.seconds(candidate.start),
                        "end": WakePhraseSpotter.seconds(candidate.end), "kws": candidate.keyphraseScore,
                        "command_start": WakePhraseSpotter.seconds(candidate.commandStart), "accepted": candidate.accepted,
                        "rejection": candidate.rejection,
                    ]
                    if let margin = candidate.margin { line["margin"] = margin }
                    if let margin = candidate.weakestWordMargin { line["word_margin"] = margin }
                    if let score = candidate.score { line["score"] = score }
                    if let probability = candidate.verifierProbability { line["verifier"] = probability }
                    if recordsFeatures, let spectrogram = candidate.spectrogram {
                        // Two decimals are finer than the verifier can tell apart, and keep the file a third the size.
                        line["features"] = spectrogram.map { ($0 * 100).rounded() / 100 }
                    }
                    try write(line)
                }
                // The public API must agree with the candidates it was built from.
                #expect(accepted == spotter.candidates.filter(\.accepted).map { WakePhraseSpotter.seconds($0.end) })
                try write([
                    "type": "stream", "run": name, "stream": stream, "seconds": audio.duration,
                    "processing_seconds": spotter.processingSeconds - before,
                ])
            }
        }
    }
}
