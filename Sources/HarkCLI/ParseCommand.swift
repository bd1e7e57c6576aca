import Foundation
import HarkCore

/// `hark parse`: one sentence → intents and entities, optionally with the reasons.
enum ParseCommand: Command {
    static let name = "parse"
    static let abstract = "Understand one sentence: intents with confidence and entities"
    static let usage = """
        USAGE: hark parse [--workspace PATH] [--alternates] [--explain] [--json] TEXT...

        Prints the intents (those at or above \(Understanding.reportingThreshold); the top ten with --alternates) and entities of TEXT.
          --workspace PATH  Watson Assistant v1 workspace JSON (default Intents/home.json)
          --alternates      list the top ten intents, as Watson's alternate_intents does
          --explain         show the features, unknown words and adjustments that decided
          --json            print {"input":{"text"},"intents":[...],"entities":[...]}
        """

    static func run(_ args: inout Arguments) throws -> Int32 {
        let workspacePath = try args.option("--workspace")
        let alternates = try args.flag("--alternates")
        let explain = try args.flag("--explain")
        let json = try args.flag("--json")
        let words = try args.positionals()
        try args.finish()
        guard !words.isEmpty else { throw UsageError(message: "missing TEXT") }
        let text = words.joined(separator: " ")
        let workspace = try loadWorkspace(workspacePath)
        let matcher = Matcher(workspace: workspace)
        let explanation = matcher.explain(text)
        let u = explanation.understanding
        let intents = u.reportedIntents(alternates: alternates)
        if json {
            var o = JSONObject()
            o["input"] = .object(JSONObject([("text", .string(text))]))
            o["intents"] = .array(intents.map(\.json))
            o["entities"] = .array(u.entities.map(\.json))
            if explain { o["explanation"] = explanationJSON(explanation) }
            Output.line(JSONValue.object(o).serialized())
            return 0
        }
        var out = "input: \(text)\n\nintents:\n"
        if intents.isEmpty { out += "  (none at or above \(Understanding.reportingThreshold): out of scope; top was \(u.intents.first.map { "\($0.intent) \(fmt($0.confidence))" } ?? "nothing"))\n" }
        for i in intents { out += "  \(i.intent.padding(toLength: 24, withPad: " ", startingAt: 0)) \(fmt(i.confidence))\n" }
        out += "\nentities:\n"
        if u.entities.isEmpty { out += "  (none)\n" }
        for e in u.entities {
            out += "  @\(e.entity):\(e.value)  \"\(e.literal)\" [\(e.start), \(e.end)]  \(fmt(e.confidence))\n"
        }
        if explain { out += "\n" + explanationText(explanation) }
        print(out, terminator: "")
        return 0
    }

    static func fmt(_ x: Double) -> String { String(format: "%.4f", x) }

    static func topClasses(_ e: MatchExplanation) -> [String] {
        Array(e.classifierProbabilities.sorted { $0.value > $1.value }.prefix(3).map(\.key))
    }

    static func explanationText(_ e: MatchExplanation) -> String {
        var out = "why:\n  words (stems): \(e.tokens.joined(separator: " "))\n"
        let top = topClasses(e)
        out += "  classifier (softmax over intents\(e.classifierProbabilities["#irrelevant"] != nil ? " and #irrelevant, learnt from counterexamples" : "")):\n"
        for c in e.classifierProbabilities.sorted(by: { $0.value > $1.value }).prefix(5) {
            out += "    \(c.key.padding(toLength: 24, withPad: " ", startingAt: 0)) \(fmt(c.value))\n"
        }
        out += "  feature contributions to the logits (" + top.joined(separator: " / ") + "):\n"
        let sorted = e.features.sorted { abs($0.weights[top[0]] ?? 0) > abs($1.weights[top[0]] ?? 0) }
        for f in sorted.prefix(12) {
            let cols = top.map { String(format: "%+.3f", f.weights[$0] ?? 0) }.joined(separator: "  ")
            out += "    \(f.name.padding(toLength: 30, withPad: " ", startingAt: 0)) \(cols)\n"
        }
        if e.unknownFeatures > 0 { out += "    (\(e.unknownFeatures) feature(s) never seen in training: no contribution)\n" }
        out += "  unknown words: \(e.unknownWords.isEmpty ? "none" : e.unknownWords.joined(separator: ", "))\n"
        let v = e.evidence
        out += String(format: "  evidence: %.0f known, %.0f in entities, %.0f in system entities, %.0f function words, ", v.known, v.entityWords, v.systemEntityWords, v.functionWords)
        out += String(format: "%.0f unknown that English knows, %.0f unknown names or typos\n", v.unknownCommon, v.unknownRare)
        out += String(format: "  workspace: openness %.2f (median share of an example's words no other example uses), %.1f examples per intent\n", v.openness, v.examplesPerIntent)
        out += "  calibrated confidence of the top intent: \(fmt(e.calibratedConfidence)) (ConfidenceModel, fitted across many workspaces)\n"
        if let m = e.exactMatch { out += "  exact match of an example of \(m): confidence raised to at least 0.99\n" }
        if e.counterexampleMatch { out += "  exact match of a counterexample: every intent scaled by 0.05\n" }
        out += "  confidence = calibrated top confidence × (intent's classifier probability / top's)\n"
        return out
    }

    static func explanationJSON(_ e: MatchExplanation) -> JSONValue {
        var o = JSONObject()
        o["tokens"] = .array(e.tokens.map { .string($0) })
        var probs = JSONObject()
        for (k, v) in e.classifierProbabilities.sorted(by: { $0.value > $1.value }) { probs[k] = .number((v * 10_000).rounded() / 10_000) }
        o["classifier"] = .object(probs)
        let top = topClasses(e)
        o["features"] = .array(
            e.features.map { f in
                var fo = JSONObject()
                fo["feature"] = .string(f.name)
                for t in top { fo[t] = .number(((f.weights[t] ?? 0) * 1000).rounded() / 1000) }
                return .object(fo)
            })
        o["unknown_words"] = .array(e.unknownWords.map { .string($0) })
        o["evidence"] = e.evidence.json
        o["calibrated_confidence"] = .number((e.calibratedConfidence * 10_000).rounded() / 10_000)
        if let m = e.exactMatch { o["exact_match"] = .string(m) }
        o["counterexample_match"] = .bool(e.counterexampleMatch)
        return .object(o)
    }
}
