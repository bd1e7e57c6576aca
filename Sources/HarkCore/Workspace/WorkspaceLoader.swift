import Foundation

extension Workspace {
    /// Loads and validates a Watson Assistant v1 workspace export.
    ///
    /// Every problem is collected (not just the first) and thrown together, each with its JSON path;
    /// features Hark loads but cannot run are listed in `warnings`.
    public static func load(from url: URL) throws(WorkspaceError) -> Workspace {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            let reason = (error as NSError).localizedFailureReason ?? (error as NSError).localizedDescription
            let exists = FileManager.default.fileExists(atPath: url.path)
            throw WorkspaceError(
                file: url.path, problems: [WorkspaceProblem(path: "", message: exists ? "cannot read file: \(reason)" : "no such file")])
        }
        return try parse(data, source: url.path)
    }

    /// Parses and validates a workspace from JSON bytes; `source` names it in messages.
    public static func parse(_ data: Data, source: String = "<memory>") throws(WorkspaceError) -> Workspace {
        let json: JSONValue
        do {
            json = try JSONValue.parse(data)
        } catch {
            throw WorkspaceError(file: source, problems: [WorkspaceProblem(path: "", message: "invalid JSON at \(error)")])
        }
        var decoder = WorkspaceDecoder(source: source)
        let workspace = decoder.decode(json)
        if !decoder.problems.isEmpty { throw WorkspaceError(file: source, problems: decoder.problems) }
        return workspace
    }

    /// Parses a workspace from JSON text.
    public static func parse(_ text: String, source: String = "<memory>") throws(WorkspaceError) -> Workspace {
        try parse(Data(text.utf8), source: source)
    }
}

/// Turns the JSON document into a `Workspace`, recording problems with their JSON paths.
struct WorkspaceDecoder {
    let source: String
    var problems: [WorkspaceProblem] = []
    var warnings: [String] = []

    init(source: String) { self.source = source }

    mutating func problem(_ path: String, _ message: String) {
        problems.append(WorkspaceProblem(path: path, message: message))
    }

    // MARK: typed field access

    mutating func object(_ value: JSONValue?, _ path: String) -> JSONObject? {
        guard let value, !value.isNull else { return nil }
        guard case .object(let o) = value else {
            problem(path, "expected an object, found \(value.typeName)")
            return nil
        }
        return o
    }

    mutating func array(_ value: JSONValue?, _ path: String) -> [JSONValue] {
        guard let value, !value.isNull else { return [] }
        guard case .array(let a) = value else {
            problem(path, "expected an array, found \(value.typeName)")
            return []
        }
        return a
    }

    mutating func string(_ value: JSONValue?, _ path: String, required: Bool = false) -> String? {
        guard let value, !value.isNull else {
            if required { problem(path, "missing required string") }
            return nil
        }
        guard case .string(let s) = value else {
            problem(path, "expected a string, found \(value.typeName)")
            return nil
        }
        return s
    }

    /// A string naming one case of `E`; anything else is a problem that lists the allowed names.
    mutating func enumeration<E: RawRepresentable & CaseIterable>(
        _ value: JSONValue?, _ path: String, _ what: String, required: Bool = false
    ) -> E? where E.RawValue == String {
        guard let raw = string(value, path, required: required) else { return nil }
        guard let e = E(rawValue: raw) else {
            problem(path, "unknown \(what) \"\(raw)\": expected one of \(E.allCases.map(\.rawValue).joined(separator: ", "))")
            return nil
        }
        return e
    }

    mutating func bool(_ value: JSONValue?, _ path: String) -> Bool? {
        guard let value, !value.isNull else { return nil }
        guard case .bool(let b) = value else {
            problem(path, "expected true or false, found \(value.typeName)")
            return nil
        }
        return b
    }

    // MARK: the document

    mutating func decode(_ json: JSONValue) -> Workspace {
        guard case .object(let top) = json else {
            problem("", "expected a workspace object at the top level, found \(json.typeName)")
            return Workspace(raw: json, source: source)
        }
        var ws = Workspace(raw: json, source: source)
        ws.name = string(top["name"], "name") ?? ""
        ws.description = string(top["description"], "description") ?? ""
        ws.language = string(top["language"], "language") ?? "en"
        if !ws.language.lowercased().hasPrefix("en") {
            warnings.append("language \"\(ws.language)\": Hark's tokenizer, number words and dates are English; other languages load but match less well")
        }
        ws.intents = decodeIntents(top["intents"])
        (ws.entities, ws.systemEntities) = decodeEntities(top["entities"])
        ws.counterexamples = array(top["counterexamples"], "counterexamples").enumerated().compactMap { i, v in
            let o = object(v, "counterexamples[\(i)]")
            return string(o?["text"], "counterexamples[\(i)].text", required: o != nil)
        }
        ws.dialogNodes = decodeDialogNodes(top["dialog_nodes"])
        validateMentions(ws)
        ws.warnings = warnings
        return ws
    }

    mutating func decodeIntents(_ value: JSONValue?) -> [Intent] {
        var seen: [String: Int] = [:]
        var intents: [Intent] = []
        for (i, v) in array(value, "intents").enumerated() {
            let path = "intents[\(i)]"
            guard let o = object(v, path), let name = string(o["intent"], "\(path).intent", required: true) else { continue }
            if !Self.isValidName(name) {
                problem("\(path).intent", "invalid intent name \"\(name)\": use letters, digits, '_', '-' and '.' only")
            }
            if let first = seen[name] {
                problem("\(path).intent", "duplicate intent \"\(name)\" (first defined at intents[\(first)])")
                continue
            }
            seen[name] = i
            var examples: [IntentExample] = []
            var seenText: Set<String> = []
            var duplicates: [Int] = []
            for (j, e) in array(o["examples"], "\(path).examples").enumerated() {
                let ep = "\(path).examples[\(j)]"
                guard let eo = object(e, ep), let text = string(eo["text"], "\(ep).text", required: true) else { continue }
                if text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
                    problem("\(ep).text", "empty example")
                    continue
                }
                if !seenText.insert(text.lowercased()).inserted {
                    duplicates.append(j)
                    continue
                }
                var mentions: [Mention] = []
                let length = text.unicodeScalars.count
                for (k, m) in array(eo["mentions"], "\(ep).mentions").enumerated() {
                    let mp = "\(ep).mentions[\(k)]"
                    guard let mo = object(m, mp), let entity = string(mo["entity"], "\(mp).entity", required: true) else { continue }
                    let loc = array(mo["location"], "\(mp).location").compactMap(\.doubleValue)
                    guard loc.count == 2, loc[0] >= 0, loc[0] < loc[1], loc[1] <= Double(length), loc[0] == loc[0].rounded(), loc[1] == loc[1].rounded()
                    else {
                        problem("\(mp).location", "expected [start, end] with 0 <= start < end <= \(length) (the example's length)")
                        continue
                    }
                    mentions.append(Mention(entity: entity, start: Int(loc[0]), end: Int(loc[1])))
                }
                examples.append(IntentExample(text: text, mentions: mentions))
            }
            if !duplicates.isEmpty {
                warnings.append("\(path) (\(name)): \(duplicates.count) duplicate example(s) kept once: \(duplicates.map { "examples[\($0)]" }.joined(separator: ", "))")
            }
            if examples.isEmpty { warnings.append("\(path): intent \(name) has no examples and can never be recognised") }
            intents.append(Intent(name: name, description: string(o["description"], "\(path).description"), examples: examples))
        }
        return intents
    }

    mutating func decodeEntities(_ value: JSONValue?) -> ([EntityDefinition], Set<String>) {
        var seen: [String: Int] = [:]
        var entities: [EntityDefinition] = []
        var system: Set<String> = []
        for (i, v) in array(value, "entities").enumerated() {
            let path = "entities[\(i)]"
            guard let o = object(v, path), let name = string(o["entity"], "\(path).entity", required: true) else { continue }
            if let first = seen[name] {
                problem("\(path).entity", "duplicate entity \"\(name)\" (first defined at entities[\(first)])")
                continue
            }
            seen[name] = i
            let values = array(o["values"], "\(path).values")
            if name.hasPrefix("sys-") {
                if !values.isEmpty { problem("\(path).values", "system entity \(name) takes no values") }
                if !SystemEntityExtractor.supported.contains(name) {
                    warnings.append("\(path): system entity \(name) is not supported by Hark; conditions on @\(name) will be false")
                }
                system.insert(name)
                continue
            }
            if !Self.isValidName(name) {
                problem("\(path).entity", "invalid entity name \"\(name)\": use letters, digits, '_', '-' and '.' only")
            }
            let fuzzy = bool(o["fuzzy_match"], "\(path).fuzzy_match") ?? false
            var decoded: [EntityValue] = []
            var seenValues: Set<String> = []
            for (j, ev) in values.enumerated() {
                let vp = "\(path).values[\(j)]"
                guard let vo = object(ev, vp), let text = string(vo["value"], "\(vp).value", required: true) else { continue }
                if !seenValues.insert(text).inserted {
                    problem("\(vp).value", "duplicate value \"\(text)\" in entity \(name)")
                    continue
                }
                let type = string(vo["type"], "\(vp).type") ?? "synonyms"
                switch type {
                case "synonyms":
                    let synonyms = array(vo["synonyms"], "\(vp).synonyms").enumerated().compactMap { k, s in
                        string(s, "\(vp).synonyms[\(k)]", required: true)
                    }
                    decoded.append(EntityValue(value: text, kind: .synonyms(synonyms), metadata: vo["metadata"]))
                case "patterns":
                    var patterns: [String] = []
                    for (k, p) in array(vo["patterns"], "\(vp).patterns").enumerated() {
                        guard let pattern = string(p, "\(vp).patterns[\(k)]", required: true) else { continue }
                        do {
                            _ = try NSRegularExpression(pattern: pattern)
                            patterns.append(pattern)
                        } catch {
                            problem("\(vp).patterns[\(k)]", "invalid regular expression \"\(pattern)\"")
                        }
                    }
                    if patterns.isEmpty { warnings.append("\(vp): pattern value \"\(text)\" of entity \(name) has no patterns and never matches") }
                    decoded.append(EntityValue(value: text, kind: .patterns(patterns), metadata: vo["metadata"]))
                default:
                    problem("\(vp).type", "unknown value type \"\(type)\": expected \"synonyms\" or \"patterns\"")
                }
            }
            entities.append(EntityDefinition(name: name, fuzzyMatch: fuzzy, values: decoded))
        }
        return (entities, system)
    }

    mutating func decodeDialogNodes(_ value: JSONValue?) -> [DialogNode] {
        var nodes: [DialogNode] = []
        var indexByID: [String: Int] = [:]
        var pathByNode: [String] = []
        for (i, v) in array(value, "dialog_nodes").enumerated() {
            let path = "dialog_nodes[\(i)]"
            guard let o = object(v, path), let id = string(o["dialog_node"], "\(path).dialog_node", required: true) else { continue }
            let here = "\(path) (\(id))"
            if let first = indexByID[id] {
                problem("\(here).dialog_node", "duplicate dialog node id (first at dialog_nodes[\(first)])")
                continue
            }
            var node = DialogNode(id: id)
            if let type: DialogNode.NodeType = enumeration(o["type"], "\(here).type", "node type") { node.type = type }
            node.title = string(o["title"], "\(here).title")
            node.parent = string(o["parent"], "\(here).parent")
            node.previousSibling = string(o["previous_sibling"], "\(here).previous_sibling")
            node.conditions = string(o["conditions"], "\(here).conditions")
            node.output = o["output"].flatMap { $0.isNull ? nil : $0 }
            if let output = node.output, output.objectValue == nil {
                problem("\(here).output", "expected an object, found \(output.typeName)")
            }
            node.context = object(o["context"], "\(here).context")
            node.variable = string(o["variable"], "\(here).variable")
            node.eventName = string(o["event_name"], "\(here).event_name")
            node.digressIn = string(o["digress_in"], "\(here).digress_in")
            node.digressOut = string(o["digress_out"], "\(here).digress_out")
            node.digressOutSlots = string(o["digress_out_slots"], "\(here).digress_out_slots")
            node.disabled = bool(o["disabled"], "\(here).disabled") ?? false
            node.metadata = o["metadata"]
            if let ns = object(o["next_step"], "\(here).next_step") {
                node.nextStep = decodeNextStep(ns, "\(here).next_step")
            }
            for (k, a) in array(o["actions"], "\(here).actions").enumerated() {
                let ap = "\(here).actions[\(k)]"
                guard let ao = object(a, ap), let name = string(ao["name"], "\(ap).name", required: true) else { continue }
                let type = string(ao["type"], "\(ap).type") ?? "client"
                if type != "client" {
                    warnings.append("\(ap): action \"\(name)\" has type \(type); Hark runs only client actions and returns the others unrun")
                }
                node.actions.append(
                    DialogAction(
                        name: name, type: type, parameters: object(ao["parameters"], "\(ap).parameters") ?? JSONObject(),
                        resultVariable: string(ao["result_variable"], "\(ap).result_variable")))
            }
            if let c = node.conditions?.trimmingCharacters(in: .whitespacesAndNewlines), !c.isEmpty, !Self.specialConditions.contains(c) {
                do {
                    let e = try CompiledExpression.parse(c)
                    if !e.unsupportedFeatures.isEmpty {
                        warnings.append("\(here).conditions: uses \(e.unsupportedFeatures.joined(separator: ", ")), which Hark cannot run; the condition will be false")
                    }
                } catch {
                    problem("\(here).conditions", "unparsable condition: \(error.description)")
                }
            }
            if node.type == .slot, node.variable == nil { problem("\(here).variable", "slot node needs a variable such as \"$time\"") }
            if node.type == .eventHandler, node.eventName == nil {
                problem("\(here).event_name", "event_handler node needs an event_name")
            }
            indexByID[id] = nodes.count
            pathByNode.append(here)
            nodes.append(node)
        }
        // References between nodes.
        for (i, node) in nodes.enumerated() {
            let here = pathByNode[i]
            if let parent = node.parent, indexByID[parent] == nil {
                problem("\(here).parent", "refers to missing dialog node \"\(parent)\"")
            }
            if let prev = node.previousSibling {
                if let j = indexByID[prev] {
                    if nodes[j].parent != node.parent {
                        problem("\(here).previous_sibling", "\"\(prev)\" has a different parent, so it cannot be this node's previous sibling")
                    }
                } else {
                    problem("\(here).previous_sibling", "refers to missing dialog node \"\(prev)\"")
                }
            }
            if let target = node.nextStep?.dialogNode, indexByID[target] == nil {
                problem("\(here).next_step.dialog_node", "refers to missing dialog node \"\(target)\"")
            }
            if node.nextStep?.behavior == .jumpTo, node.nextStep?.dialogNode == nil {
                problem("\(here).next_step", "jump_to needs a dialog_node")
            }
        }
        // Two nodes claiming the same previous sibling, or a sibling cycle, make the order ambiguous.
        var claimed: [String: String] = [:]
        for node in nodes {
            let key = "\(node.parent ?? "")\u{0}\(node.previousSibling ?? "")"
            if let other = claimed[key] {
                let after = node.previousSibling.map { "\"\($0)\"" } ?? "nothing (first child)"
                problem("\(pathByNode[indexByID[node.id]!]).previous_sibling", "nodes \"\(other)\" and \"\(node.id)\" both come right after \(after)")
            } else {
                claimed[key] = node.id
            }
        }
        for (i, node) in nodes.enumerated() {
            var seen: Set<String> = [node.id]
            var p = node.parent
            while let id = p {
                if !seen.insert(id).inserted {
                    problem("\(pathByNode[i]).parent", "parent chain loops back to \"\(id)\"")
                    break
                }
                p = indexByID[id].flatMap { nodes[$0].parent }
            }
        }
        return nodes
    }

    mutating func decodeNextStep(_ o: JSONObject, _ path: String) -> NextStep? {
        guard let behavior: NextStep.Behavior = enumeration(o["behavior"], "\(path).behavior", "behavior", required: true) else { return nil }
        var step = NextStep(behavior: behavior)
        step.selector = enumeration(o["selector"], "\(path).selector", "selector")
        step.dialogNode = string(o["dialog_node"], "\(path).dialog_node")
        return step
    }

    /// Mentions must name a defined entity.
    mutating func validateMentions(_ ws: Workspace) {
        let known = Set(ws.entities.map(\.name)).union(ws.systemEntities)
        var missing: [String: Int] = [:]
        for intent in ws.intents {
            for e in intent.examples {
                for m in e.mentions where !known.contains(m.entity) { missing[m.entity, default: 0] += 1 }
            }
        }
        for (name, count) in missing.sorted(by: { $0.key < $1.key }) {
            warnings.append("intents: \(count) example mention(s) name entity \"\(name)\", which is not defined; they are ignored")
        }
    }

    /// Conditions the dialog runtime answers itself, not the expression language.
    static let specialConditions: Set<String> = ["anything_else", "conversation_start", "welcome", "irrelevant"]

    static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && name.unicodeScalars.allSatisfy { CharacterSet.alphanumerics.contains($0) || "_-.".unicodeScalars.contains($0) }
    }
}
