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

    public static let none = "(none)"

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
        return EvaluationReport(
            cases: cases.count, threshold: threshold, accuracy: cases.isEmpty ? 0 : Double(correct) / Double(cases.count),
            intents: metrics, inScopeCases: inScope, inScopeAccepted: accepted, inScopeCorrect: inCorrect, outOfScopeCases: oos,
            outOfScopeRejected: rejected, confusions: confusions.map { ($0.0, $0.1, $0.2) },
            entityPrecision: anyEntities ? ep : nil, entityRecall: anyEntities ? er : nil,
            entityF1: anyEntities ? (ep + er > 0 ? 2 * ep * er / (ep + er) : 0) : nil,
            parseMicroseconds: times.sorted(), failures: failures)
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
                ("correct", .number(Double(inScopeCorrect))),
                ("accuracy", Self.r4(inScopeCases > 0 ? Double(inScopeCorrect) / Double(inScopeCases) : 0)),
            ]))
        let rejection = outOfScopeCases > 0 ? Double(outOfScopeRejected) / Double(outOfScopeCases) : 0
        o["out_of_scope"] = .object(
            JSONObject([
                ("cases", .number(Double(outOfScopeCases))), ("rejected", .number(Double(outOfScopeRejected))),
                ("rejection_rate", Self.r4(rejection)), ("false_accept_rate", Self.r4(outOfScopeCases > 0 ? 1 - rejection : 0)),
            ]))
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
