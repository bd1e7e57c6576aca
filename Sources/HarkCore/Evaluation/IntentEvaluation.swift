import Foundation

/// One evaluation case: a sentence, the intent it should get (`nil` = out of scope) and optional entities.
public struct EvaluationCase: Sendable {
    public var text: String
    public var intent: String?
    /// Expected entity literals by entity name, e.g. `{"playlist": "road trip"}`.
    public var entities: [String: [String]]

    public init(text: String, intent: String?, entities: [String: [String]] = [:]) {
        self.text = text
        self.intent = intent
        self.entities = entities
    }

    /// Parses a JSON Lines file of cases; errors name the line and field.
    public static func load(jsonLines text: String, source: String) throws(WorkspaceError) -> [EvaluationCase] {
        var cases: [EvaluationCase] = []
        var problems: [WorkspaceProblem] = []
        for (n, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty { continue }
            let here = "line \(n + 1)"
            let value: JSONValue
            do { value = try JSONValue.parse(String(trimmed)) } catch {
                problems.append(WorkspaceProblem(path: here, message: "invalid JSON at \(error)"))
                continue
            }
            guard let o = value.objectValue else {
                problems.append(WorkspaceProblem(path: here, message: "expected an object, found \(value.typeName)"))
                continue
            }
            guard let t = o["text"]?.stringValue else {
                problems.append(WorkspaceProblem(path: "\(here).text", message: "missing required string"))
                continue
            }
            var intent: String?
            switch o["intent"] {
            case .none, .some(.null): intent = nil
            case .some(.string(let s)): intent = s
            case .some(let other):
                problems.append(WorkspaceProblem(path: "\(here).intent", message: "expected a string or null, found \(other.typeName)"))
                continue
            }
            var entities: [String: [String]] = [:]
            if let e = o["entities"], !e.isNull {
                guard let eo = e.objectValue else {
                    problems.append(WorkspaceProblem(path: "\(here).entities", message: "expected an object, found \(e.typeName)"))
                    continue
                }
                for (k, v) in eo.pairs {
                    switch v {
                    case .string(let s): entities[k] = [s]
                    case .array(let a): entities[k] = a.compactMap(\.stringValue)
                    default: problems.append(WorkspaceProblem(path: "\(here).entities.\(k)", message: "expected a string or an array of strings"))
                    }
                }
            }
            cases.append(EvaluationCase(text: t, intent: intent, entities: entities))
        }
        if !problems.isEmpty { throw WorkspaceError(file: source, problems: problems) }
        return cases
    }
}

/// Accuracy, per-intent precision/recall/F1, out-of-scope rejection, confusions, entity F1 and parse times.
public struct EvaluationReport: Sendable {
    public struct IntentMetrics: Sendable {
        public var precision: Double
        public var recall: Double
        public var f1: Double
        public var support: Int
    }

    public var cases: Int
    public var threshold: Double
    /// Share of cases whose prediction (top intent at or above the threshold, else "none") is right.
    public var accuracy: Double
    public var intents: [String: IntentMetrics]
    public var inScopeCases: Int
    public var inScopeAccepted: Int
    public var inScopeCorrect: Int
    public var outOfScopeCases: Int
    public var outOfScopeRejected: Int
    public var confusions: [(expected: String, predicted: String, count: Int)]
    /// Entity (slot) micro precision/recall/F1 over cases that list entities; `nil` when none do.
    public var entityPrecision: Double?
    public var entityRecall: Double?
    public var entityF1: Double?
    /// Per-case parse times in microseconds (median of the repeats), sorted.
    public var parseMicroseconds: [Double]
    public var failures: [(text: String, expected: String, predicted: String, confidence: Double)]
    /// In-scope cases whose top intent is right with a confidence above 0.9 (the tutorial app's rule).
    public var inScopeConfident: Int = 0
    /// The top intent's confidence against whether it is right, over the in-scope cases.
    public var calibration = Calibration()
    /// The same over every case, an out-of-scope one counting as wrong whatever its top intent.
    public var calibrationAll = Calibration()
    /// Each case's outcome, in input order: what `hark eval --cases-out` writes.
    public var outcomes: [Outcome] = []

    /// One case as the matcher saw it: the top intent, its confidence and the evidence behind it.
    public struct Outcome: Sendable {
        public var text: String
        public var expected: String?
        public var top: String?
        public var confidence: Double
        public var evidence: ConfidenceEvidence

        public var json: JSONValue {
            .object(JSONObject([
                ("text", .string(text)), ("expected", expected.map(JSONValue.string) ?? .null), ("top", top.map(JSONValue.string) ?? .null),
                ("confidence", EvaluationReport.r4(confidence)), ("evidence", evidence.json),
                // The model's inputs exactly as `ConfidenceModel` sees them, so the fit never re-derives them.
                ("features", .object(JSONObject(zip(ConfidenceEvidence.featureNames, evidence.features.map { JSONValue.number($0) }).map { ($0, $1) }))),
            ]))
        }
    }

    public static let none = "(none)"

    /// A reliability table: the top confidence in ten equal bins, each bin's mean confidence against the share
    /// of its cases that were right, and the expected calibration error (ECE) that sums their gaps weighted by
    /// the bin's share of the cases. A calibrated matcher's 0.8 is right four times in five.
    public struct Calibration: Sendable {
        public static let binCount = 10
        public var counts = [Int](repeating: 0, count: binCount)
        public var confidenceSums = [Double](repeating: 0, count: binCount)
        public var correct = [Int](repeating: 0, count: binCount)

        public init() {}

        public mutating func add(confidence: Double, correct isCorrect: Bool) {
            let c = min(1, max(0, confidence))
            let bin = min(Self.binCount - 1, Int(c * Double(Self.binCount)))
            counts[bin] += 1
            confidenceSums[bin] += c
            if isCorrect { correct[bin] += 1 }
        }

        public var total: Int { counts.reduce(0, +) }

        public var expectedCalibrationError: Double {
            let n = Double(total)
            guard n > 0 else { return 0 }
            var e = 0.0
            for b in 0..<Self.binCount where counts[b] > 0 {
                let k = Double(counts[b])
                e += k / n * abs(Double(correct[b]) / k - confidenceSums[b] / k)
            }
            return e
        }

        public var json: JSONValue {
            let bins: [JSONValue] = (0..<Self.binCount).map { b in
                let k = Double(counts[b])
                return .object(JSONObject([
                    ("lower", .number(Double(b) / Double(Self.binCount))), ("upper", .number(Double(b + 1) / Double(Self.binCount))),
                    ("count", .number(k)), ("correct", .number(Double(correct[b]))),
                    ("confidence", EvaluationReport.r4(k > 0 ? confidenceSums[b] / k : 0)),
                    ("accuracy", EvaluationReport.r4(k > 0 ? Double(correct[b]) / k : 0)),
                ]))
            }
            return .object(JSONObject([("ece", EvaluationReport.r4(expectedCalibrationError)), ("cases", .number(Double(total))), ("bins", .array(bins))]))
        }
    }

    public static func percentile(_ sorted: [Double], _ p: Double) -> Double {
        guard !sorted.isEmpty else { return 0 }
        let rank = Int((p * Double(sorted.count - 1)).rounded())
        return sorted[min(max(rank, 0), sorted.count - 1)]
    }

    /// Runs every case through the matcher.
    public static func run(
        matcher: Matcher, cases: [EvaluationCase], threshold: Double = Understanding.reportingThreshold, timingRepeats: Int = 5
    ) -> EvaluationReport {
        var tp: [String: Int] = [:]
        var fp: [String: Int] = [:]
        var fn: [String: Int] = [:]
        var support: [String: Int] = [:]
        var confusion: [String: Int] = [:]
        var correct = 0
        var inScope = 0
        var accepted = 0
        var inCorrect = 0
        var oos = 0
        var rejected = 0
        var eTP = 0
        var eFP = 0
        var eFN = 0
        var anyEntities = false
        var times: [Double] = []
        var failures: [(String, String, String, Double)] = []
        var calibration = Calibration()
        var calibrationAll = Calibration()
        var confident = 0
        var outcomes: [Outcome] = []
        outcomes.reserveCapacity(cases.count)
        let now = Date()
        for c in cases {
            var samples: [Double] = []
            var u: Understanding?
            for _ in 0..<max(1, timingRepeats) {
                let t0 = DispatchTime.now().uptimeNanoseconds
                u = matcher.understand(c.text, now: now)
                samples.append(Double(DispatchTime.now().uptimeNanoseconds - t0) / 1000)
            }
            samples.sort()
            times.append(samples[samples.count / 2])
            let understanding = u!
            let top = understanding.intents.first
            let predicted = (top.map { $0.confidence >= threshold } ?? false) ? top!.intent : nil
            let expected = c.intent
            if predicted == expected { correct += 1 }
            let topRight = expected != nil && top?.intent == expected
            outcomes.append(Outcome(text: c.text, expected: expected, top: top?.intent, confidence: top?.confidence ?? 0, evidence: understanding.evidence))
            calibrationAll.add(confidence: top?.confidence ?? 0, correct: topRight)
            if expected != nil {
                calibration.add(confidence: top?.confidence ?? 0, correct: topRight)
                if topRight, let t = top, t.confidence > 0.9 { confident += 1 }
            }
            if let expected {
                inScope += 1
                support[expected, default: 0] += 1
                if predicted != nil { accepted += 1 }
                if predicted == expected { inCorrect += 1 }
            } else {
                oos += 1
                if predicted == nil { rejected += 1 }
            }
            if predicted == expected {
                if let p = predicted { tp[p, default: 0] += 1 }
            } else {
                if let p = predicted { fp[p, default: 0] += 1 }
                if let e = expected { fn[e, default: 0] += 1 }
                confusion["\(expected ?? none)\u{0}\(predicted ?? none)", default: 0] += 1
                failures.append((c.text, expected ?? none, predicted ?? none, top?.confidence ?? 0))
            }
            if !c.entities.isEmpty {
                anyEntities = true
                var found = Set(understanding.entities.map { "\($0.entity)\u{0}\($0.literal.lowercased())" })
                for (name, values) in c.entities {
                    for v in values {
                        let key = "\(name)\u{0}\(v.lowercased().trimmingCharacters(in: .whitespaces))"
                        if found.remove(key) != nil { eTP += 1 } else { eFN += 1 }
                    }
                }
                // Predicted entities of kinds the case does not label are not counted against it.
                eFP += found.filter { key in c.entities.keys.contains(String(key.split(separator: "\u{0}").first ?? "")) }.count
            }
        }
        var metrics: [String: IntentMetrics] = [:]
        let names = Set(support.keys).union(tp.keys).union(fp.keys)
        for name in names {
            let t = Double(tp[name] ?? 0)
            let p = t + Double(fp[name] ?? 0)
            let r = t + Double(fn[name] ?? 0)
            let precision = p > 0 ? t / p : 0
            let recall = r > 0 ? t / r : 0
            let f1 = precision + recall > 0 ? 2 * precision * recall / (precision + recall) : 0
            metrics[name] = IntentMetrics(precision: precision, recall: recall, f1: f1, support: support[name] ?? 0)
        }
        let confusions = confusion.map { key, count -> (String, String, Int) in
            let parts = key.split(separator: "\u{0}", omittingEmptySubsequences: false).map(String.init)
            return (parts[0], parts[1], count)
        }.sorted { ($0.2, $1.0, $1.1) > ($1.2, $0.0, $0.1) }
        let ep = eTP + eFP > 0 ? Double(eTP) / Double(eTP + eFP) : 0
        let er = eTP + eFN > 0 ? Double(eTP) / Double(eTP + eFN) : 0
        var report = EvaluationReport(
            cases: cases.count, threshold: threshold, accuracy: cases.isEmpty ? 0 : Double(correct) / Double(cases.count),
            intents: metrics, inScopeCases: inScope, inScopeAccepted: accepted, inScopeCorrect: inCorrect, outOfScopeCases: oos,
            outOfScopeRejected: rejected, confusions: confusions.map { ($0.0, $0.1, $0.2) },
            entityPrecision: anyEntities ? ep : nil, entityRecall: anyEntities ? er : nil,
            entityF1: anyEntities ? (ep + er > 0 ? 2 * ep * er / (ep + er) : 0) : nil,
            parseMicroseconds: times.sorted(), failures: failures)
        report.inScopeConfident = confident
        report.calibration = calibration
        report.calibrationAll = calibrationAll
        report.outcomes = outcomes
        return report
    }

    static func r4(_ x: Double) -> JSONValue { .number((x * 10_000).rounded() / 10_000) }

    public var json: JSONValue {
        var o = JSONObject()
        o["cases"] = .number(Double(cases))
        o["threshold"] = .number(threshold)
        o["accuracy"] = Self.r4(accuracy)
        var per = JSONObject()
        for name in intents.keys.sorted() {
            let m = intents[name]!
            per[name] = .object(JSONObject([("precision", Self.r4(m.precision)), ("recall", Self.r4(m.recall)), ("f1", Self.r4(m.f1)), ("support", .number(Double(m.support)))]))
        }
        o["intents"] = .object(per)
        o["in_scope"] = .object(
            JSONObject([
                ("cases", .number(Double(inScopeCases))), ("accepted", .number(Double(inScopeAccepted))),
                ("correct", .number(Double(inScopeCorrect))), ("confident", .number(Double(inScopeConfident))),
                ("accuracy", Self.r4(inScopeCases > 0 ? Double(inScopeCorrect) / Double(inScopeCases) : 0)),
            ]))
        let rejection = outOfScopeCases > 0 ? Double(outOfScopeRejected) / Double(outOfScopeCases) : 0
        o["out_of_scope"] = .object(
            JSONObject([
                ("cases", .number(Double(outOfScopeCases))), ("rejected", .number(Double(outOfScopeRejected))),
                ("rejection_rate", Self.r4(rejection)), ("false_accept_rate", Self.r4(outOfScopeCases > 0 ? 1 - rejection : 0)),
            ]))
        o["calibration"] = calibration.json
        o["calibration_all"] = calibrationAll.json
        o["confusions"] = .array(
            confusions.map { .object(JSONObject([("expected", .string($0.expected)), ("predicted", .string($0.predicted)), ("count", .number(Double($0.count)))])) })
        if let entityF1, let entityPrecision, let entityRecall {
            o["slots"] = .object(
                JSONObject([
                    ("precision", Self.r4(entityPrecision)), ("recall", Self.r4(entityRecall)), ("f1", Self.r4(entityF1)),
                    ("method", .string("dictionary entities matched against labelled literals; contextual (mention-learnt) entities are not implemented")),
                ]))
        }
        let mean = parseMicroseconds.isEmpty ? 0 : parseMicroseconds.reduce(0, +) / Double(parseMicroseconds.count)
        o["parse_us"] = .object(
            JSONObject([
                ("p50", .number((Self.percentile(parseMicroseconds, 0.5) * 10).rounded() / 10)),
                ("p99", .number((Self.percentile(parseMicroseconds, 0.99) * 10).rounded() / 10)),
                ("mean", .number((mean * 10).rounded() / 10)),
            ]))
        return .object(o)
    }
}
