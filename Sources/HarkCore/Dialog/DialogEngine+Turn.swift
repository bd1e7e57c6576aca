import Foundation

extension DialogEngine {
    /// The first turn, before any input: runs the `conversation_start` / `welcome` nodes.
    public func start(
        context: JSONObject, now: Date, random: inout some RandomNumberGenerator,
        performer: (any DialogActionPerformer)? = nil
    ) -> DialogTurn {
        turn(Understanding(text: "", intents: [], entities: []), context: context, now: now, random: &random, performer: performer)
    }

    /// One user turn. `context` is the one returned by the previous turn (its `system` object carries the
    /// dialog stack, counters, `_node_output_map` and slot state). With a `performer`, client actions run as
    /// their nodes fire and their results land in the context (docs/device-actions.md).
    public func respond(
        to understanding: Understanding, context: JSONObject, now: Date, random: inout some RandomNumberGenerator,
        performer: (any DialogActionPerformer)? = nil
    ) -> DialogTurn {
        turn(understanding, context: context, now: now, random: &random, performer: performer)
    }

    private func turn<R: RandomNumberGenerator>(
        _ understanding: Understanding, context incoming: JSONObject, now: Date, random: inout R,
        performer: (any DialogActionPerformer)?
    ) -> DialogTurn {
        var user = incoming
        var system = user["system"]?.objectValue ?? JSONObject()
        user["system"] = nil
        let turnsSoFar = system["dialog_turn_counter"]?.doubleValue ?? 0
        let requestsSoFar = system["dialog_request_counter"]?.doubleValue ?? 0
        let scope = ExpressionScope(
            inputText: understanding.text,
            intents: understanding.intents.filter { $0.confidence >= Understanding.reportingThreshold },
            entities: understanding.entities, context: user, now: now)
        var run = DialogRun(
            engine: self, scope: scope, firstTurn: turnsSoFar == 0,
            outputMap: system["_node_output_map"]?.objectValue ?? JSONObject(), performer: performer)

        switch stackEntry(system["dialog_stack"]?.arrayValue?.first) {
        case .frame(let f, let focus, let skipped):
            // A frame waiting for slot values gets the input first.
            run.turn.nodesVisited.append(nodes[f].id)
            run.steps += 1
            run.runFrame(f, focus: focus, skipped: skipped, random: &random)
        case .startAt(let n):
            if !run.walk(level(owner: nodes[n].levelOwner), from: nodes[n].levelPosition, random: &random) {
                run.fellBack = true
                run.walkRoot(random: &random)
            }
        case .root:
            run.walkRoot(random: &random)
        }

        system["dialog_stack"] = .array([encode(run.next)])
        system["dialog_turn_counter"] = .number(turnsSoFar + 1)
        system["dialog_request_counter"] = .number(requestsSoFar + 1)
        system["_node_output_map"] = .object(run.outputMap)
        if case .root = run.next {
            system["branch_exited"] = .bool(true)
            system["branch_exited_reason"] = .string(run.fellBack ? "fallback" : "completed")
        } else {
            system["branch_exited"] = nil
            system["branch_exited_reason"] = nil
        }
        var context = JSONObject()
        context["conversation_id"] = incoming["conversation_id"] ?? .string(UUID().uuidString.lowercased())
        for (key, value) in run.scope.context.pairs where key != "conversation_id" { context[key] = value }
        context["system"] = .object(system)
        run.turn.context = context
        return run.turn
    }

    func level(owner: Int?) -> [LevelEntry] {
        owner.map { nodes[$0].childLevel } ?? rootLevel
    }

    /// Reads `system.dialog_stack[0]`; anything unknown (an edited workspace, a foreign context) means root.
    private func stackEntry(_ value: JSONValue?) -> StackEntry {
        guard let id = value?["dialog_node"]?.stringValue, let n = byID[id], !nodes[n].disabled else { return .root }
        if value?["state"]?.stringValue == "in_progress", nodes[n].type == .frame, !nodes[n].slots.isEmpty {
            let skipped = (value?["skipped_slots"]?.arrayValue ?? []).compactMap { $0.stringValue.flatMap { byID[$0] } }
            return .frame(n, focus: value?["slot_in_focus"]?.stringValue.flatMap { byID[$0] }, skipped: Set(skipped))
        }
        return nodes[n].levelPosition >= 0 ? .startAt(n) : .root
    }

    private func encode(_ entry: StackEntry) -> JSONValue {
        switch entry {
        case .root:
            return ["dialog_node": "root"]
        case .startAt(let n):
            return .object(JSONObject([("dialog_node", .string(nodes[n].id))]))
        case .frame(let f, let focus, let skipped):
            var o = JSONObject([("dialog_node", .string(nodes[f].id)), ("state", "in_progress")])
            if let focus { o["slot_in_focus"] = .string(nodes[focus].id) }
            if !skipped.isEmpty { o["skipped_slots"] = .array(skipped.sorted().map { .string(nodes[$0].id) }) }
            return .object(o)
        }
    }
}

/// Where the next input is evaluated. Hark's `dialog_stack` holds one entry:
/// `{"dialog_node": "root"}`, `{"dialog_node": id}` (evaluate from this node on among its siblings, then
/// root), or `{"dialog_node": frame, "state": "in_progress", "slot_in_focus": slot, "skipped_slots": [slot]?}`.
enum StackEntry {
    case root
    case startAt(Int)
    case frame(Int, focus: Int?, skipped: Set<Int>)
}

/// The mutable state of one turn.
struct DialogRun {
    let engine: DialogEngine
    var scope: ExpressionScope
    let firstTurn: Bool
    var outputMap: JSONObject
    var turn = DialogTurn()
    var steps = 0
    var stopped = false
    var fellBack = false
    var next = StackEntry.root
    let performer: (any DialogActionPerformer)?

    init(engine: DialogEngine, scope: ExpressionScope, firstTurn: Bool, outputMap: JSONObject, performer: (any DialogActionPerformer)?) {
        self.engine = engine
        self.scope = scope
        self.firstTurn = firstTurn
        self.outputMap = outputMap
        self.performer = performer
    }

    private var nodes: [CompiledNode] { engine.nodes }

    mutating func log(_ level: String, _ message: String) {
        turn.logMessages.append(.object(JSONObject([("level", .string(level)), ("msg", .string(message))])))
    }

    func holds(_ condition: DialogCondition) -> Bool {
        switch condition {
        case .always, .anythingElse: return true
        case .never: return false
        case .conversationStart: return firstTurn
        case .welcome: return firstTurn && scope.inputText.allSatisfy(\.isWhitespace)
        case .irrelevant: return scope.intents.isEmpty
        case .expression(let e): return e.isTrue(in: scope)
        }
    }

    /// Counts one node firing; false (and a log message) once the per-turn bound is reached.
    private mutating func step(_ n: Int) -> Bool {
        if stopped { return false }
        steps += 1
        if steps > engine.maxStepsPerTurn {
            stopped = true
            next = .root
            log("warn", "dialog stopped at \(nodes[n].id) after \(engine.maxStepsPerTurn) nodes in one turn: a jump_to or skip_user_input loop")
            return false
        }
        return true
    }

    mutating func walkRoot<R: RandomNumberGenerator>(random: inout R) {
        if !walk(engine.rootLevel, from: 0, random: &random) { next = .root }
    }

    /// Evaluates a sibling list from `start`; fires the first node whose folders and condition hold.
    mutating func walk<R: RandomNumberGenerator>(_ level: [LevelEntry], from start: Int, random: inout R) -> Bool {
        var i = max(start, 0)
        while i < level.count {
            let entry = level[i]
            i += 1
            guard entry.folders.allSatisfy({ holds(nodes[$0].condition) }), holds(nodes[entry.node].condition) else { continue }
            fire(entry.node, random: &random)
            return true
        }
        return false
    }

    mutating func fire<R: RandomNumberGenerator>(_ n: Int, random: inout R) {
        guard step(n) else { return }
        turn.nodesVisited.append(nodes[n].id)
        if nodes[n].type == .frame, !nodes[n].slots.isEmpty {
            runFrame(n, focus: nil, random: &random)
        } else {
            respond(n, random: &random)
        }
    }

    /// The node's response: context, output, the first true response condition, then next_step.
    private mutating func respond<R: RandomNumberGenerator>(_ n: Int, random: inout R) {
        let node = nodes[n]
        apply(node.context, at: node.label)
        emit(n, random: &random)
        for rc in node.responseConditions where holds(nodes[rc].condition) {
            turn.nodesVisited.append(nodes[rc].id)
            apply(nodes[rc].context, at: nodes[rc].label)
            emit(rc, random: &random)
            // A jump on the chosen response replaces the node's own next step.
            if nodes[rc].behavior == .jumpTo {
                follow(rc, owner: n, random: &random)
                return
            }
            break
        }
        follow(n, owner: n, random: &random)
    }

    /// What happens after `stepNode`'s response; `owner` is the node whose children come next.
    private mutating func follow<R: RandomNumberGenerator>(_ stepNode: Int, owner: Int, random: inout R) {
        let children = nodes[owner].childLevel
        switch nodes[stepNode].behavior {
        case .jumpTo:
            guard let t = nodes[stepNode].jumpTarget else { next = .root; return }
            let target = nodes[t]
            if target.disabled { next = .root; return }
            switch nodes[stepNode].selector ?? .condition {
            case .body:
                fire(t, random: &random)
            case .userInput:
                next = target.levelPosition >= 0 ? .startAt(t) : .root
            case .condition, .client:
                guard target.levelPosition >= 0 else { fire(t, random: &random); return }
                if !walk(engine.level(owner: target.levelOwner), from: target.levelPosition, random: &random) {
                    fellBack = true
                    walkRoot(random: &random)
                }
            }
        case .skipUserInput:
            if children.isEmpty || !walk(children, from: 0, random: &random) { next = .root }
        default:
            next = children.isEmpty ? .root : .startAt(children[0].node)
        }
    }

    // MARK: Frames and slots

    /// Fills the frame's slots from the input, prompts for the first empty required slot, or, when all are
    /// filled, gives the frame's own response. Input is tried in IBM's documented order: Found (slot
    /// check-for and `filled` responses), the frame's `generic` handlers, digressions to root nodes when the
    /// frame allows them, then the focused slot's Not found (`nomatch`) responses.
    mutating func runFrame<R: RandomNumberGenerator>(_ f: Int, focus: Int?, skipped: Set<Int> = [], random: inout R) {
        let frame = nodes[f]
        var skipped = skipped
        var filled = Set<Int>()
        var skipToResponse = false
        for s in frame.slots where !skipped.contains(s) {
            let slot = nodes[s]
            if let enabling = slot.enabling, !holds(enabling) { continue }
            guard let check = slot.checkFor, check.isTrue(in: scope) else { continue }
            filled.insert(s)
            turn.nodesVisited.append(slot.id)
            var setsVariable = false
            if let h = slot.inputHandler {
                turn.nodesVisited.append(nodes[h].id)
                apply(nodes[h].context, at: nodes[h].label)
                emit(h, random: &random)
                setsVariable = nodes[h].context.contains { $0.0 == slot.variable }
            }
            if !setsVariable, let variable = slot.variable {
                do {
                    scope.context[variable] = try check.evaluate(in: scope)
                } catch {
                    log("err", "\(slot.label) check-for: \(error.description)")
                }
            }
            // Found: the first true response; "clear slot and prompt again" is `reprompt`.
            if let h = answer(slot.filledHandlers, random: &random) {
                switch nodes[h].behavior {
                case .reprompt: if let variable = slot.variable { scope.context[variable] = .null }
                case .skipAllSlots: skipToResponse = true
                default: break
                }
            }
        }
        var nomatched = false
        if let focus, filled.isEmpty, !skipToResponse {
            let generic = frame.handlers.filter { nodes[$0].eventName == "generic" }
            if let h = answer(generic, random: &random) {
                // A slot handler answers, then the prompt is repeated unless it says otherwise.
                switch nodes[h].behavior {
                case .skipSlot: skipped.insert(focus)
                case .skipAllSlots: skipToResponse = true
                default: break
                }
            } else if frame.digressOutSlots == "allow_all" || frame.digressOutSlots == "allow_returning",
                digress(from: f, focus: focus, skipped: skipped, random: &random)
            {
                return
            } else if let h = answer(nodes[focus].nomatchHandlers, random: &random) {
                switch nodes[h].behavior {
                case .reprompt: break
                case .skipSlot: skipped.insert(focus)
                case .skipAllSlots: skipToResponse = true
                default: nomatched = true  // the Not found response stands in for the prompt
                }
            }
        }
        if !skipToResponse {
            for s in frame.slots where !skipped.contains(s) {
                let slot = nodes[s]
                if let enabling = slot.enabling, !holds(enabling) { continue }
                // A slot without a prompt is optional.
                guard let prompt = slot.focusHandler, let variable = slot.variable else { continue }
                if let value = scope.context[variable], !value.isNull { continue }
                if !(nomatched && s == focus) {
                    turn.nodesVisited.append(nodes[prompt].id)
                    apply(nodes[prompt].context, at: nodes[prompt].label)
                    emit(prompt, random: &random)
                }
                next = .frame(f, focus: s, skipped: skipped)
                return
            }
        }
        respond(f, random: &random)
    }

    /// Runs the first handler whose condition holds (context, output); returns it.
    private mutating func answer<R: RandomNumberGenerator>(_ handlers: [Int], random: inout R) -> Int? {
        guard let h = handlers.first(where: { holds(nodes[$0].condition) }) else { return nil }
        turn.nodesVisited.append(nodes[h].id)
        apply(nodes[h].context, at: nodes[h].label)
        emit(h, random: &random)
        return h
    }

    /// Offers the input to the root nodes a frame may digress to; true when one answered. When that branch
    /// finished in this turn and its root node returns, the frame asks for the slot in focus again.
    private mutating func digress<R: RandomNumberGenerator>(from f: Int, focus: Int, skipped: Set<Int>, random: inout R) -> Bool {
        for entry in engine.rootLevel where entry.node != f {
            let target = nodes[entry.node]
            if case .anythingElse = target.condition { continue }
            if target.digressIn == "not_available" || entry.folders.contains(where: { nodes[$0].digressIn == "not_available" }) { continue }
            guard entry.folders.allSatisfy({ holds(nodes[$0].condition) }), holds(target.condition) else { continue }
            next = .root
            fire(entry.node, random: &random)
            let returns = target.digressIn == "returns" || entry.folders.contains { nodes[$0].digressIn == "returns" }
            if returns, !stopped, case .root = next, let prompt = nodes[focus].focusHandler {
                turn.nodesVisited.append(nodes[prompt].id)
                emit(prompt, random: &random)
                next = .frame(f, focus: focus, skipped: skipped)
            }
            return true
        }
        return false
    }

    // MARK: Context and output

    mutating func apply(_ context: [(String, CompiledValue)], at label: String) {
        for (key, compiled) in context {
            let value = evaluate(compiled, at: "\(label).context.\(key)")
            // Objects merge into an existing object (Watson's JSON merge); everything else overwrites.
            if case .object(let new) = value, case .object(var old)? = scope.context[key] {
                for (k, v) in new.pairs { old[k] = v }
                scope.context[key] = .object(old)
            } else {
                scope.context[key] = value
            }
        }
    }

    mutating func evaluate(_ compiled: CompiledValue, at path: String) -> JSONValue {
        switch compiled {
        case .literal(let v):
            return v
        case .value(let t):
            do {
                return try t.value(in: scope)
            } catch {
                log("err", "\(path): \(error.description)")
                return .null
            }
        case .rendered(let t):
            return .string(t.render(in: scope))
        case .object(let members):
            var o = JSONObject()
            for (k, v) in members { o[k] = evaluate(v, at: "\(path).\(k)") }
            return .object(o)
        case .array(let items):
            return .array(items.enumerated().map { evaluate($0.element, at: "\(path)[\($0.offset)]") })
        }
    }

    /// Renders a node's output into the turn and records the variation chosen in `_node_output_map`.
    mutating func emit<R: RandomNumberGenerator>(_ n: Int, random: inout R) {
        act(n)
        let node = nodes[n]
        for item in node.output.items {
            switch item {
            case .text(let values, let policy, let key):
                guard !values.isEmpty else { continue }
                var record = outputMap[node.id]?.objectValue ?? JSONObject()
                let previous = record[key]?[0]?.doubleValue.map { Int($0) }
                let chosen: [Int]
                switch policy {
                case .multiline:
                    chosen = Array(values.indices)
                case .sequential:
                    chosen = [previous.map { ($0 + 1) % values.count } ?? 0]
                case .random:
                    if values.count == 1 {
                        chosen = [0]
                    } else if let previous, values.indices.contains(previous) {
                        // Never the same variation twice in a row.
                        let pick = Int.random(in: 0..<(values.count - 1), using: &random)
                        chosen = [pick >= previous ? pick + 1 : pick]
                    } else {
                        chosen = [Int.random(in: 0..<values.count, using: &random)]
                    }
                }
                if policy != .multiline {
                    record[key] = .array(chosen.map { .number(Double($0)) })
                    outputMap[node.id] = .object(record)
                }
                let lines = chosen.map { values[$0].render(in: scope) }.filter { !$0.isEmpty }
                guard !lines.isEmpty else { continue }
                turn.text += lines
                if policy == .multiline {
                    turn.generic.append(textResponse(lines.joined(separator: "\n")))
                } else {
                    turn.generic += lines.map(textResponse)
                }
            case .other(let compiled):
                turn.generic.append(evaluate(compiled, at: "\(node.label).output.generic"))
            }
        }
        for (key, compiled) in node.output.extra {
            turn.extraOutput[key] = evaluate(compiled, at: "\(node.label).output.\(key)")
        }
    }

    /// Renders a node's actions into the turn and, with a performer, runs its client actions: the result goes
    /// to `result_variable`, a failure to `log_messages` (the variable is left untouched).
    mutating func act(_ n: Int) {
        let node = nodes[n]
        for (a, action) in node.actions.enumerated() {
            var rendered = action
            rendered.parameters = evaluate(node.actionParameters[a], at: "\(node.label).actions[\(a)].parameters").objectValue ?? action.parameters
            turn.actions.append(rendered)
            guard let performer, rendered.type == "client" else { continue }
            do {
                let result = try performer.perform(rendered)
                if let variable = rendered.resultVariable.map(contextVariableName), !variable.isEmpty {
                    scope.context[variable] = result
                }
            } catch {
                log("error", "\(node.label): action \"\(rendered.name)\": \(error.message)")
            }
        }
    }

    private func textResponse(_ text: String) -> JSONValue {
        .object(JSONObject([("response_type", "text"), ("text", .string(text))]))
    }
}
