import Foundation

/// Runs a Watson Assistant v1 dialog tree: given what the user said and the context returned by the previous
/// turn, it walks the nodes as Watson does and returns the reply, the nodes visited and the updated context.
///
/// Every condition and template is compiled once in `init`; a turn only evaluates. The engine keeps no
/// conversation state: everything a conversation needs between turns travels in the context's `system`
/// object, so a client that passes back the context it received continues the conversation.
///
/// How Hark reads the export (see docs/dialog.md):
/// - Slots run only under `frame` nodes. Slot children of a `standard` node are dormant: Watson's tooling
///   keeps a node's slots when its Slots switch is turned off and turns the node back into `standard`
///   (car-dashboard's "Trigger The On Action Commands" is such a node). They are reported in `warnings`.
/// - A slot's "check for" is the condition of its `input` event handler; when it is true the handler's
///   `context` is applied (legacy shape: `{"time": "@sys-time"}` is what fills `$time`). When the handler
///   does not set the slot's variable, the variable gets the value of the check-for expression (frame-era
///   rule: "the Check for value becomes the value of the context variable"). A slot's own `conditions`,
///   if any, is its enabling condition; without an `input` handler it is the check-for.
/// - Digressions: a frame waiting for a slot keeps the input unless its `digress_out_slots` allows
///   digressions; then input that fills no slot goes to the root nodes (not `anything_else`, not those with
///   `digress_in: not_available`), and if the branch answered in one turn and its root node (or folder)
///   has `digress_in: returns`, the slot prompt is repeated and the frame stays open. Anything longer
///   abandons the frame: Hark's dialog stack holds one entry.
public struct DialogEngine: Sendable {
    let nodes: [CompiledNode]
    let rootLevel: [LevelEntry]
    let byID: [String: Int]
    /// Upper bound on nodes fired in one turn: a jump_to cycle or skip_user_input chain stops here.
    let maxStepsPerTurn = 64

    /// Things in the dialog the engine cannot run as Watson would, each naming the node: dormant slots,
    /// digressions, handler events, unsupported methods in output and context templates. Unsupported
    /// methods in conditions and non-client actions are reported by the workspace loader instead.
    public private(set) var warnings: [String] = []

    public init(workspace: Workspace) throws(DialogCompileError) {
        var compiler = DialogCompiler(workspace: workspace)
        try compiler.compile()
        nodes = compiler.nodes
        rootLevel = compiler.rootLevel
        byID = compiler.byID
        warnings = compiler.warnings
    }
}

// MARK: - Compiled form

/// A node condition, with Watson's special conditions resolved before the expression parser sees them.
enum DialogCondition: Sendable {
    case always, never, anythingElse, conversationStart, welcome, irrelevant
    case expression(CompiledExpression)
}

/// A JSON value from a node's `context` or `output` with its strings compiled.
indirect enum CompiledValue: Sendable {
    case literal(JSONValue)
    /// A context value string: evaluated to a typed value (`"<? $n + 1 ?>"` → number).
    case value(Template)
    /// An output string: rendered to text.
    case rendered(Template)
    case object([(String, CompiledValue)])
    case array([CompiledValue])
}

enum SelectionPolicy: String, Sendable {
    case sequential, random, multiline
}

enum OutputItem: Sendable {
    /// A text response: variations chosen by `policy`; `key` names it in `_node_output_map`.
    case text(values: [Template], policy: SelectionPolicy, key: String)
    /// Any other `generic` response (option, image, pause, …), its strings rendered.
    case other(CompiledValue)
}

struct CompiledOutput: Sendable {
    var items: [OutputItem] = []
    /// Output fields other than `text`/`generic`, e.g. `ui_action`.
    var extra: [(String, CompiledValue)] = []
}

/// One entry of a walkable sibling list: a standard or frame node, gated by the folders it sits in.
struct LevelEntry: Sendable {
    var node: Int
    var folders: [Int]
}

struct CompiledNode: Sendable {
    var id: String
    var label: String
    var type: DialogNode.NodeType
    var disabled: Bool
    var condition: DialogCondition
    var context: [(String, CompiledValue)]
    var output: CompiledOutput
    var behavior: NextStep.Behavior?
    var selector: NextStep.Selector?
    var jumpTarget: Int?
    var actions: [DialogAction]
    /// Action parameters with their strings compiled, parallel to `actions`.
    var actionParameters: [CompiledValue]
    var digressIn: String?
    var digressOutSlots: String?
    /// Walkable children (folders expanded in place).
    var childLevel: [LevelEntry] = []
    var responseConditions: [Int] = []
    /// Frames: slot children in order. Slots: nothing.
    var slots: [Int] = []
    /// Frames: node-level `generic` handlers. Slots: unused.
    var handlers: [Int] = []
    /// Where this node sits: owner of its level (nearest non-folder ancestor; nil = root) and its position.
    var levelOwner: Int?
    var levelPosition: Int = -1
    // Slot parts.
    var variable: String?
    var enabling: DialogCondition?
    var checkFor: CompiledExpression?
    var inputHandler: Int?
    var focusHandler: Int?
    /// Found responses, in order: the first whose condition holds answers.
    var filledHandlers: [Int] = []
    /// Not found responses, in order.
    var nomatchHandlers: [Int] = []
    var eventName: String?
}

// MARK: - Compiler

struct DialogCompiler {
    let workspace: Workspace
    var nodes: [CompiledNode] = []
    var rootLevel: [LevelEntry] = []
    var byID: [String: Int] = [:]
    var warnings: [String] = []
    private var childrenOf: [String?: [Int]] = [:]

    init(workspace: Workspace) { self.workspace = workspace }

    mutating func compile() throws(DialogCompileError) {
        let source = workspace.dialogNodes
        for (i, node) in source.enumerated() { byID[node.id] = i }
        for (i, node) in source.enumerated() {
            nodes.append(try compileNode(node, index: i))
        }
        // Children in sibling order (a linked list by previous_sibling).
        var grouped: [String?: [Int]] = [:]
        for (i, node) in source.enumerated() {
            var parent = node.parent
            if let p = parent, byID[p] == nil {
                warnings.append("dialog node \(node.id): parent \(p) does not exist; treated as a root node")
                parent = nil
            }
            grouped[parent, default: []].append(i)
        }
        // Sorted so warnings come out in the same order on every load.
        for (parent, members) in grouped.sorted(by: { ($0.key ?? "") < ($1.key ?? "") }) {
            childrenOf[parent] = siblingOrder(members, parent: parent)
        }

        rootLevel = level(of: nil, owner: nil, folders: [])
        for i in nodes.indices {
            let node = source[i]
            let kids = childrenOf[node.id] ?? []
            switch node.type {
            case .folder:
                continue
            case .slot:
                compileSlot(i, kids: kids)
            default:
                nodes[i].childLevel = level(of: node.id, owner: i, folders: [])
                nodes[i].responseConditions = kids.filter { nodes[$0].type == .responseCondition && !nodes[$0].disabled }
                let slots = kids.filter { nodes[$0].type == .slot && !nodes[$0].disabled }
                if node.type == .frame {
                    nodes[i].slots = slots
                    nodes[i].handlers = kids.filter { nodes[$0].type == .eventHandler && !nodes[$0].disabled }
                    for h in nodes[i].handlers where nodes[h].eventName != "generic" {
                        warnings.append("dialog node \(nodes[h].id): frame handler event '\(nodes[h].eventName ?? "")' is not run")
                    }
                    if slots.isEmpty { warnings.append("dialog node \(node.id): frame without slots runs as a standard node") }
                } else if !slots.isEmpty {
                    warnings.append("dialog node \(node.id): slots \(slots.map { nodes[$0].id }.joined(separator: ", ")) under a \(node.type.rawValue) node are dormant (only frame nodes collect slots)")
                }
            }
        }
        for (i, node) in source.enumerated() {
            if node.digressIn == "returns" {
                warnings.append("dialog node \(node.id): digress_in 'returns' is honoured only for digressions out of frames; a node waiting for its children's input is not returned to")
            }
            if let d = node.digressOutSlots, d == "allow_returning", node.type == .frame {
                warnings.append("dialog node \(node.id): digress_out_slots 'allow_returning' runs as 'allow_all'")
            }
            if nodes[i].selector == .client {
                warnings.append("dialog node \(node.id): jump_to selector 'client' runs as 'condition'")
            }
            if let b = nodes[i].behavior, b == .reprompt || b == .skipAllSlots || b == .skipSlot, node.type != .eventHandler {
                warnings.append("dialog node \(node.id): next_step '\(b.rawValue)' is only run on slot handlers")
            }
        }
    }

    /// Orders siblings by the previous_sibling linked list; nodes the list does not reach go last, in file order.
    private mutating func siblingOrder(_ members: [Int], parent: String?) -> [Int] {
        let source = workspace.dialogNodes
        var next: [String: Int] = [:]
        var firsts: [Int] = []
        let ids = Set(members.map { source[$0].id })
        for m in members {
            if let prev = source[m].previousSibling, ids.contains(prev), next[prev] == nil {
                next[prev] = m
            } else {
                firsts.append(m)
            }
        }
        var ordered: [Int] = []
        var seen = Set<Int>()
        for first in firsts {
            var cur: Int? = first
            while let c = cur, !seen.contains(c) {
                ordered.append(c)
                seen.insert(c)
                cur = next[source[c].id]
            }
        }
        for m in members where !seen.contains(m) { ordered.append(m) }
        if firsts.count > 1 {
            warnings.append("dialog nodes under \(parent ?? "root"): \(firsts.count) sibling chains; \(firsts.map { source[$0].id }.joined(separator: ", ")) each start one, run in file order")
        }
        return ordered
    }

    /// The walkable sibling list under `parent`: standard and frame nodes, folders expanded in place.
    private mutating func level(of parent: String?, owner: Int?, folders: [Int]) -> [LevelEntry] {
        var entries: [LevelEntry] = []
        for k in childrenOf[parent] ?? [] where !nodes[k].disabled {
            switch nodes[k].type {
            case .folder:
                entries += level(of: nodes[k].id, owner: owner, folders: folders + [k])
            case .standard, .frame:
                nodes[k].levelOwner = owner
                entries.append(LevelEntry(node: k, folders: folders))
            default:
                continue
            }
        }
        // Positions of nodes inside folders are relative to the flattened list: fix them up.
        for (pos, e) in entries.enumerated() { nodes[e.node].levelPosition = pos }
        return entries
    }

    private mutating func compileSlot(_ i: Int, kids: [Int]) {
        let handlers = kids.filter { nodes[$0].type == .eventHandler && !nodes[$0].disabled }
        for h in handlers {
            switch nodes[h].eventName {
            case "input": nodes[i].inputHandler = nodes[i].inputHandler ?? h
            case "focus": nodes[i].focusHandler = nodes[i].focusHandler ?? h
            case "filled": nodes[i].filledHandlers.append(h)
            case "nomatch": nodes[i].nomatchHandlers.append(h)
            default: warnings.append("dialog node \(nodes[h].id): slot handler event '\(nodes[h].eventName ?? "")' is not run")
            }
        }
        let slotCondition = nodes[i].condition
        if let input = nodes[i].inputHandler {
            if case .expression(let e) = nodes[input].condition { nodes[i].checkFor = e }
            if case .expression = slotCondition { nodes[i].enabling = slotCondition }
        } else if case .expression(let e) = slotCondition {
            nodes[i].checkFor = e
        }
        if nodes[i].checkFor == nil {
            warnings.append("dialog node \(nodes[i].id): slot \(nodes[i].variable ?? "?") has no check-for condition and can never be filled")
        }
    }

    private func label(_ node: DialogNode, _ index: Int) -> String { "dialog_nodes[\(index)] (\(node.id))" }

    private mutating func compileNode(_ node: DialogNode, index: Int) throws(DialogCompileError) -> CompiledNode {
        let where_ = label(node, index)
        let condition = try compileCondition(node.conditions, node: node, at: "\(where_).conditions")
        var context: [(String, CompiledValue)] = []
        for (key, value) in (node.context ?? JSONObject()).pairs {
            context.append((key, try compileValue(value, typed: true, at: "\(where_).context.\(key)")))
        }
        let output = try compileOutput(node.output, node: node, at: "\(where_).output")
        var jumpTarget: Int?
        var behavior = node.nextStep?.behavior
        if let step = node.nextStep, step.behavior == .jumpTo {
            if let target = step.dialogNode, let t = byID[target] {
                jumpTarget = t
            } else {
                warnings.append("dialog node \(node.id): jump_to target '\(step.dialogNode ?? "")' does not exist; waits for input instead")
                behavior = .getUserInput
            }
        }
        var actionParameters: [CompiledValue] = []
        for (a, action) in node.actions.enumerated() {
            actionParameters.append(try compileValue(.object(action.parameters), typed: true, at: "\(where_).actions[\(a)].parameters"))
        }
        var variable = node.variable
        if let v = variable, v.hasPrefix("$") { variable = String(v.dropFirst()) }
        return CompiledNode(
            id: node.id, label: where_, type: node.type, disabled: node.disabled, condition: condition,
            context: context, output: output, behavior: behavior, selector: node.nextStep?.selector,
            jumpTarget: jumpTarget, actions: node.actions, actionParameters: actionParameters,
            digressIn: node.digressIn, digressOutSlots: node.digressOutSlots, variable: variable, eventName: node.eventName)
    }

    private mutating func compileCondition(_ text: String?, node: DialogNode, at path: String) throws(DialogCompileError) -> DialogCondition {
        let trimmed = (text ?? "").trimmingWhitespace(newlines: true)
        switch trimmed {
        case "":
            // Empty means "always" where Watson has no condition to write (folders, response conditions,
            // handlers, slots); a standard node without a condition never matches.
            switch node.type {
            case .standard, .frame: return .never
            default: return .always
            }
        case "true": return .always
        case "false": return .never
        case "anything_else": return .anythingElse
        case "conversation_start": return .conversationStart
        case "welcome": return .welcome
        case "irrelevant": return .irrelevant
        default:
            do {
                // Unsupported methods in conditions are the loader's warnings already (Assistant joins both lists).
                return .expression(try CompiledExpression.parse(trimmed))
            } catch {
                throw DialogCompileError(message: "\(path): \(error.description)")
            }
        }
    }

    /// Strings without `$`, `@` or `<?` cannot refer to anything: they stay literals and cost nothing per turn.
    private static func isPlain(_ s: String) -> Bool {
        !s.contains("$") && !s.contains("@") && !s.contains("<?") && !s.contains("\\")
    }

    private mutating func template(_ s: String, at path: String) throws(DialogCompileError) -> Template {
        do {
            let t = try Template.parse(s)
            for f in t.unsupportedFeatures { warnings.append("\(path) uses \(f), which Hark does not support") }
            return t
        } catch {
            throw DialogCompileError(message: "\(path): \(error.description)")
        }
    }

    private mutating func compileValue(_ value: JSONValue, typed: Bool, at path: String) throws(DialogCompileError) -> CompiledValue {
        switch value {
        case .string(let s):
            if Self.isPlain(s) { return .literal(value) }
            let t = try template(s, at: path)
            return typed ? .value(t) : .rendered(t)
        case .object(let o):
            var members: [(String, CompiledValue)] = []
            for (k, v) in o.pairs { members.append((k, try compileValue(v, typed: typed, at: "\(path).\(k)"))) }
            return .object(members)
        case .array(let a):
            var items: [CompiledValue] = []
            for (i, v) in a.enumerated() { items.append(try compileValue(v, typed: typed, at: "\(path)[\(i)]")) }
            return .array(items)
        default:
            return .literal(value)
        }
    }

    private mutating func compileOutput(_ output: JSONValue?, node: DialogNode, at path: String) throws(DialogCompileError) -> CompiledOutput {
        var result = CompiledOutput()
        guard let o = output?.objectValue else { return result }
        if let generic = o["generic"]?.arrayValue {
            // `generic` is the newer shape and wins over `text` when a node has both.
            for (g, item) in generic.enumerated() {
                let itemPath = "\(path).generic[\(g)]"
                if item["response_type"]?.stringValue == "text" {
                    var values: [Template] = []
                    for (v, entry) in (item["values"]?.arrayValue ?? []).enumerated() {
                        guard let s = entry["text"]?.stringValue ?? entry.stringValue else { continue }
                        values.append(try template(s, at: "\(itemPath).values[\(v)].text"))
                    }
                    result.items.append(.text(values: values, policy: policy(item["selection_policy"], node: node), key: String(g)))
                } else {
                    let type = item["response_type"]?.stringValue ?? "?"
                    if !["option", "image", "pause"].contains(type) {
                        warnings.append("dialog node \(node.id): response_type '\(type)' is passed through to the client")
                    }
                    result.items.append(.other(try compileValue(item, typed: false, at: itemPath)))
                }
            }
        } else if let text = o["text"] {
            var sources: [String] = []
            var selection: JSONValue?
            switch text {
            case .string(let s): sources = [s]
            case .array(let a): sources = a.compactMap(\.stringValue)
            case .object(let t):
                sources = (t["values"]?.arrayValue ?? []).compactMap(\.stringValue)
                selection = t["selection_policy"]
            default: break
            }
            var values: [Template] = []
            for (v, s) in sources.enumerated() { values.append(try template(s, at: "\(path).text.values[\(v)]")) }
            result.items.append(.text(values: values, policy: policy(selection, node: node), key: "0"))
        }
        for (key, value) in o.pairs where key != "text" && key != "generic" {
            result.extra.append((key, try compileValue(value, typed: false, at: "\(path).\(key)")))
        }
        return result
    }

    private mutating func policy(_ value: JSONValue?, node: DialogNode) -> SelectionPolicy {
        guard let name = value?.stringValue else { return .sequential }
        if let p = SelectionPolicy(rawValue: name) { return p }
        warnings.append("dialog node \(node.id): selection_policy '\(name)' runs as sequential")
        return .sequential
    }
}
