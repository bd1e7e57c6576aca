import Foundation
import HarkCore

/// `hark eval`: accuracy, per-intent metrics, out-of-scope rejection and parse time over a case file.
enum EvalCommand: Command {
    static let name = "eval"
    static let abstract = "Measure intent accuracy, out-of-scope rejection and parse time on a case file"
    static let usage = """
        USAGE: hark eval [--workspace PATH] [--threshold X] [--show-failures N] [--json] [--cases-out FILE] CASES.jsonl

        Each line of CASES.jsonl: {"text": "...", "intent": "Name" or null (out of scope), "entities": {...}}.
        A case's prediction is the top intent if its confidence is at or above the threshold, else none.
          --workspace PATH     Watson Assistant v1 workspace JSON (default Intents/home.json)
          --threshold X        acceptance threshold (default \(Understanding.reportingThreshold), Watson's)
          --show-failures N    list up to N misclassified cases (default 0)
          --json               print the report as one JSON object
          --cases-out FILE     write each case's outcome as a JSON line: top intent, confidence and the
                               evidence the confidence was computed from (bench/fit_confidence.py reads it)
        """

    static func run(_ args: inout Arguments) throws -> Int32 {
        let workspacePath = try args.option("--workspace")
        let threshold = try args.option("--threshold", parse: { Double($0).flatMap { (0...1).contains($0) ? $0 : nil } }, expected: "a number from 0 to 1")
            ?? Understanding.reportingThreshold
        let show = try args.option("--show-failures", parse: { Int($0).flatMap { $0 >= 0 ? $0 : nil } }, expected: "a whole number") ?? 0
        let json = try args.flag("--json")
        let casesOut = try args.option("--cases-out")
        let files = try args.positionals()
        try args.finish()
        guard files.count == 1 else { throw UsageError(message: files.isEmpty ? "missing CASES.jsonl" : "expected one case file, got \(files.count)") }
        let path = files[0]
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CommandFailure(message: "\(path): cannot read file (\(FileManager.default.fileExists(atPath: path) ? "permission denied" : "no such file"))", exitCode: 66)
        }
        guard let text = String(data: data, encoding: .utf8) else { throw CommandFailure(message: "\(path): not UTF-8 text", exitCode: 65) }
        let cases: [EvaluationCase]
        do { cases = try EvaluationCase.load(jsonLines: text, source: path) } catch { throw CommandFailure(message: error.description, exitCode: 65) }
        let workspace = try loadWorkspace(workspacePath, quiet: json)
        let matcher = Matcher(workspace: workspace)
        let report = EvaluationReport.run(matcher: matcher, cases: cases, threshold: threshold)
        if let casesOut {
            let lines = report.outcomes.map { $0.json.serialized() + "\n" }.joined()
            guard FileManager.default.createFile(atPath: casesOut, contents: Data(lines.utf8)) else {
                throw CommandFailure(message: "\(casesOut): cannot write the case outcomes", exitCode: 73)
            }
        }
        if json {
            Output.line(report.json.serialized())
            return 0
        }
        var out = "cases: \(report.cases)   threshold: \(report.threshold)\n"
        out += String(format: "accuracy: %.4f\n", report.accuracy)
        if report.inScopeCases > 0 {
            out += String(format: "in scope: %d cases, %d accepted, %d correct (%.4f)\n", report.inScopeCases, report.inScopeAccepted, report.inScopeCorrect,
                Double(report.inScopeCorrect) / Double(report.inScopeCases))
        }
        if report.inScopeCases > 0 {
            out += String(format: "in scope, right with confidence > 0.9: %d (%.4f)\n", report.inScopeConfident,
                Double(report.inScopeConfident) / Double(report.inScopeCases))
            out += String(format: "calibration (top confidence vs right, in scope): ECE %.4f\n", report.calibration.expectedCalibrationError)
            out += "  confidence   cases   mean conf   accuracy\n"
            let c = report.calibration
            for b in 0..<EvaluationReport.Calibration.binCount where c.counts[b] > 0 {
                let k = Double(c.counts[b])
                out += String(format: "  %.1f–%.1f %9d %11.3f %10.3f\n", Double(b) / 10, Double(b + 1) / 10, c.counts[b], c.confidenceSums[b] / k, Double(c.correct[b]) / k)
            }
        }
        if report.outOfScopeCases > 0 {
            let r = Double(report.outOfScopeRejected) / Double(report.outOfScopeCases)
            out += String(format: "out of scope: %d cases, rejection rate %.4f, false-accept rate %.4f\n", report.outOfScopeCases, r, 1 - r)
        }
        if !report.intents.isEmpty {
            out += "\n" + "intent".padding(toLength: 24, withPad: " ", startingAt: 0) + " precision  recall     f1  support\n"
            for name in report.intents.keys.sorted() {
                let m = report.intents[name]!
                out += name.padding(toLength: 24, withPad: " ", startingAt: 0) + String(format: "  %8.4f %7.4f %6.4f %8d\n", m.precision, m.recall, m.f1, m.support)
            }
        }
        if let f1 = report.entityF1 {
            out += String(format: "\nentities (dictionary only): precision %.4f recall %.4f f1 %.4f\n", report.entityPrecision ?? 0, report.entityRecall ?? 0, f1)
        }
        if !report.confusions.isEmpty {
            out += "\nconfusions (expected → predicted: count):\n"
            for c in report.confusions.prefix(15) { out += "  \(c.expected) → \(c.predicted): \(c.count)\n" }
        }
        out += String(format: "\nparse time per sentence: p50 %.1f µs, p99 %.1f µs\n", EvaluationReport.percentile(report.parseMicroseconds, 0.5),
            EvaluationReport.percentile(report.parseMicroseconds, 0.99))
        if show > 0, !report.failures.isEmpty {
            out += "\nfailures:\n"
            for f in report.failures.prefix(show) { out += "  [\(f.expected) → \(f.predicted) \(String(format: "%.3f", f.confidence))] \(f.text)\n" }
        }
        print(out, terminator: "")
        return 0
    }
}
