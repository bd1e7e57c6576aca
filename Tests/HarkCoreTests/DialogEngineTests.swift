import Foundation
import Testing
@testable import HarkCore


/// A dialog node with a text output, built the way the tests read best.
func dnode(
    _ id: String, _ condition: String? = nil, type: DialogNode.NodeType = .standard, parent: String? = nil,
    text: [String]? = nil, policy: String? = nil, context: JSONValue? = nil, next: NextStep? = nil,
    variable: String? = nil, event: String? = nil, disabled: Bool = false
) -> DialogNode {
    var output: JSONValue?
    if let text {
        var t = JSONObject([("values", .array(text.map { .string($0) }))])
        if let policy { t["selection_policy"] = .string(policy) }
        output = .object(JSONObject([("text", .object(t))]))
    }
    return DialogNode(
        id: id, type: type, parent: parent, conditions: condition, output: output, context: context?.objectValue, nextStep: next,
        variable: variable, eventName: event, disabled: disabled)
}

/// A JSON object from a literal.
func obj(_ value: JSONValue) -> JSONObject { value.objectValue ?? JSONObject() }

/// Links siblings in array order (unless a test set `previousSibling` itself) and builds the workspace.
func dialogWorkspace(_ nodes: [DialogNode], link: Bool = true) -> Workspace {
    var last: [String: String] = [:]
    var linked: [DialogNode] = []
    for var n in nodes {
        let key = n.parent ?? ""
        if link, n.previousSibling == nil { n.previousSibling = last[key] }
        last[key] = n.id
        linked.append(n)
    }
    return Workspace(dialogNodes: linked)
}

func understanding(_ text: String = "", intent: String? = nil, confidence: Double = 0.9, entities: [(String, String)] = []) -> Understanding {
    var offset = 0
    let matches = entities.map { (name, value) -> EntityMatch in
        defer { offset += value.count + 1 }
        let numeric = Double(value).map { JSONObject([("numeric_value", .number($0))]) }
        return EntityMatch(entity: name, value: value, start: offset, end: offset + value.count, literal: value, metadata: numeric)
    }
    return Understanding(text: text, intents: intent.map { [IntentScore(intent: $0, confidence: confidence)] } ?? [], entities: matches)
}

/// A conversation that passes each turn's context back, through JSON text, as a client would.
struct Conversation {
    let engine: DialogEngine
    var context = JSONObject()
    var random = SplitMix64(seed: 7)
    let now = Date(timeIntervalSince1970: 1_764_460_800)  // 2025-11-30 00:00 UTC

    init(_ nodes: [DialogNode], link: Bool = true) throws {
        engine = try DialogEngine(workspace: dialogWorkspace(nodes, link: link))
    }

    init(engine: DialogEngine) { self.engine = engine }

    @discardableResult
    mutating func start() throws -> DialogTurn {
        let turn = engine.start(context: context, now: now, random: &random)
        context = try Self.roundTrip(turn.context)
        return turn
    }

    @discardableResult
    mutating func say(_ u: Understanding) throws -> DialogTurn {
        let turn = engine.respond(to: u, context: context, now: now, random: &random)
        context = try Self.roundTrip(turn.context)
        return turn
    }

    @discardableResult
    mutating func say(_ text: String = "", intent: String? = nil, entities: [(String, String)] = []) throws -> DialogTurn {
        try say(understanding(text, intent: intent, entities: entities))
    }

    static func roundTrip(_ context: JSONObject) throws -> JSONObject {
        let text = JSONValue.object(context).serialized()
        return try #require(try JSONValue.parse(text).objectValue)
    }
}

@Suite("Dialog engine")
struct DialogEngineTests {
    /// A context after the first turn, so conversation_start no longer holds.
    static let started = obj(["system": ["dialog_turn_counter": 1, "dialog_request_counter": 1]])

    @Test("root nodes run in previous_sibling order, not file order; disabled nodes are skipped")
    func siblingOrder() throws {
        var c = try Conversation([
            DialogNode(id: "c", previousSibling: "b", conditions: "true", output: ["text": "C"]),
            DialogNode(id: "a", conditions: "true", output: ["text": "A"], disabled: true),
            DialogNode(id: "b", previousSibling: "a", conditions: "#x", output: ["text": "B"]),
        ], link: false)
        c.context = Self.started
        #expect(try c.say(intent: "x").nodesVisited == ["b"])
        #expect(try c.say(intent: "y").text == ["C"])
    }

    @Test("folders are transparent when their condition holds or is empty", arguments: [
        (nil as String?, "in", ["inner"]),
        ("#in", "in", ["inner"]),
        ("false", "in", ["after"]),
    ])
    func folders(folderCondition: String?, intent: String, visited: [String]) throws {
        var c = try Conversation([
            dnode("f", folderCondition, type: .folder),
            dnode("inner", "#in", parent: "f", text: ["in"]),
            dnode("after", "true", text: ["after"]),
        ])
        c.context = Self.started
        #expect(try c.say(intent: intent).nodesVisited == visited)
    }

    @Test("the first true response condition answers and only its context is set")
    func responseConditions() throws {
        var c = try Conversation([
            dnode("n", "#go", context: ["count": 1]),
            dnode("r1", "@colour:red", type: .responseCondition, parent: "n", text: ["red"], context: ["picked": "red"]),
            dnode("r2", "@colour", type: .responseCondition, parent: "n", text: ["some @colour"], context: ["picked": "@colour"]),
            dnode("r3", "true", type: .responseCondition, parent: "n", text: ["none"], context: ["picked": "none"]),
        ])
        c.context = Self.started
        let turn = try c.say(intent: "go", entities: [("colour", "blue")])
        #expect(turn.nodesVisited == ["n", "r2"])
        #expect(turn.text == ["some blue"])
        #expect(c.context["picked"] == "blue")
        #expect(c.context["count"] == 1)
        #expect(turn.generic == [["response_type": "text", "text": "some blue"]])
    }

    @Test("sequential cycles across turns through _node_output_map")
    func sequential() throws {
        var c = try Conversation([dnode("n", "true", text: ["one", "two", "three"], policy: "sequential")])
        c.context = Self.started
        var said: [String] = []
        for _ in 0..<4 { said += try c.say().text }
        #expect(said == ["one", "two", "three", "one"])
    }

    @Test("multiline returns every variation; random never repeats one twice in a row")
    func multilineAndRandom() throws {
        var c = try Conversation([
            dnode("m", "#m", text: ["Hi.", "How are you?"], policy: "multiline"),
            dnode("r", "#r", text: ["a", "b", "c"], policy: "random"),
        ])
        c.context = Self.started
        let multi = try c.say(intent: "m")
        #expect(multi.text == ["Hi.", "How are you?"])
        #expect(multi.generic == [["response_type": "text", "text": "Hi.\nHow are you?"]])
        var previous = ""
        for _ in 0..<20 {
            let t = try c.say(intent: "r").text
            #expect(t.count == 1 && t != [previous])
            previous = t[0]
        }
    }

    @Test("context values are typed expressions; objects merge; null clears")
    func contextUpdates() throws {
        var c = try Conversation([
            dnode("init", "conversation_start", context: ["n": 0, "profile": ["name": "Ann", "age": 30], "tmp": "x"]),
            dnode("inc", "#inc", text: ["n is $n"], context: [
                "n": "<? $n + 1 ?>", "place": "@place", "profile": ["age": 31], "tmp": .null, "said": "<? input.text ?>",
            ]),
        ])
        try c.start()
        let turn = try c.say("go to Paris", intent: "inc", entities: [("place", "Paris")])
        #expect(turn.text == ["n is 1"])
        #expect(c.context["n"] == 1)
        #expect(c.context["place"] == "Paris")
        #expect(c.context["profile"] == ["name": "Ann", "age": 31])
        #expect(c.context["tmp"] == .null)
        #expect(c.context["said"] == "go to Paris")
        try c.say(intent: "inc")
        #expect(c.context["n"] == 2)
    }

    @Test("jump_to: condition falls through to the target's next sibling, body skips the condition, user_input waits")
    func jumpTo() throws {
        let nodes = [
            dnode("cond", "#cond", next: NextStep(behavior: .jumpTo, selector: .condition, dialogNode: "t1")),
            dnode("body", "#body", next: NextStep(behavior: .jumpTo, selector: .body, dialogNode: "t1")),
            dnode("wait", "#wait", text: ["which?"], next: NextStep(behavior: .jumpTo, selector: .userInput, dialogNode: "t1")),
            dnode("p", "false"),
            dnode("t1", "#never", parent: "p", text: ["t1"]),
            dnode("t2", "true", parent: "p", text: ["t2"]),
            dnode("else", "anything_else", text: ["else"]),
        ]
        var c = try Conversation(nodes)
        c.context = Self.started
        #expect(try c.say(intent: "cond").nodesVisited == ["cond", "t2"])
        #expect(try c.say(intent: "body").nodesVisited == ["body", "t1"])
        #expect(try c.say(intent: "wait").text == ["which?"])
        #expect(try c.say(intent: "never").nodesVisited == ["t1"])
        try c.say(intent: "wait")
        #expect(try c.say(intent: "other").nodesVisited == ["t2"])
    }

    @Test("skip_user_input evaluates the children with the same input")
    func skipUserInput() throws {
        var c = try Conversation([
            dnode("on", "#turn_on", context: ["action": "on"], next: NextStep(behavior: .skipUserInput)),
            dnode("lights", "@appliance:lights && $action == 'on'", parent: "on", text: ["Lights on."]),
            dnode("other", "true", parent: "on", text: ["Turning on @appliance."]),
        ])
        c.context = Self.started
        #expect(try c.say(intent: "turn_on", entities: [("appliance", "lights")]).nodesVisited == ["on", "lights"])
        #expect(try c.say(intent: "turn_on", entities: [("appliance", "radio")]).text == ["Turning on radio."])
    }

    @Test("children first, then root nodes, then anything_else")
    func childrenThenRoot() throws {
        let nodes = [
            dnode("ask", "#order", text: ["Small or large?"]),
            dnode("small", "@size:small", parent: "ask", text: ["Small it is."]),
            dnode("large", "@size:large", parent: "ask", text: ["Large it is."]),
            dnode("hi", "#hello", text: ["Hello."]),
            dnode("else", "anything_else", text: ["Pardon?"]),
        ]
        var c = try Conversation(nodes)
        c.context = Self.started
        try c.say(intent: "order")
        #expect(c.context["system"]?["dialog_stack"] == [["dialog_node": "small"]])
        #expect(try c.say(entities: [("size", "large")]).nodesVisited == ["large"])
        #expect(c.context["system"]?["branch_exited"] == true)
        try c.say(intent: "order")
        #expect(try c.say(intent: "hello").nodesVisited == ["hi"])
        #expect(c.context["system"]?["branch_exited_reason"] == "fallback")
        try c.say(intent: "order")
        #expect(try c.say("what").nodesVisited == ["else"])
        #expect(try c.say(entities: [("size", "large")]).nodesVisited == ["else"])
    }

    @Test("conversation_start and welcome run on the first turn only; welcome needs empty input")
    func specialConditions() throws {
        let nodes = [
            dnode("welcome", "welcome", text: ["Welcome."]),
            dnode("start", "conversation_start", text: ["Started."]),
            dnode("irr", "irrelevant", text: ["Off topic."]),
            dnode("else", "anything_else", text: ["Else."]),
        ]
        var a = try Conversation(nodes)
        #expect(try a.start().nodesVisited == ["welcome"])
        #expect(try a.say("hi", intent: "x").nodesVisited == ["else"])
        #expect(try a.say("hm").nodesVisited == ["irr"])
        var b = try Conversation(nodes)
        #expect(try b.say("hello", intent: "x").nodesVisited == ["start"])
        let low = understanding("hm", intent: "x", confidence: 0.1)
        #expect(try b.say(low).nodesVisited == ["irr"])
    }

    static let restaurant = [
        dnode("book", "#book", type: .frame, text: ["Table at $time on $date."], context: ["booked": true]),
        dnode("s_date", type: .slot, parent: "book", variable: "$date"),
        DialogNode(id: "h_date_in", type: .eventHandler, parent: "s_date", conditions: "@sys-date", context: obj(["date": "@sys-date"]), eventName: "input"),
        dnode("h_date_focus", type: .eventHandler, parent: "s_date", text: ["Which day?"], event: "focus"),
        dnode("s_time", type: .slot, parent: "book", variable: "$time"),
        dnode("h_time_in", "@sys-time", type: .eventHandler, parent: "s_time", event: "input"),
        dnode("h_time_focus", type: .eventHandler, parent: "s_time", text: ["What time?"], event: "focus"),
        dnode("h_time_nomatch", type: .eventHandler, parent: "s_time", text: ["Please say a time, like 7pm."], event: "nomatch"),
        dnode("s_note", type: .slot, parent: "book", variable: "$note"),
        dnode("h_note_in", "@note", type: .eventHandler, parent: "s_note", event: "input"),
        dnode("else", "anything_else", text: ["Else."]),
    ]

    @Test("slots fill from the triggering input, prompt for what is missing, and fill on later turns")
    func slots() throws {
        var c = try Conversation(Self.restaurant)
        c.context = Self.started
        let first = try c.say(intent: "book", entities: [("sys-date", "2025-12-01")])
        #expect(first.text == ["What time?"])
        #expect(first.nodesVisited == ["book", "s_date", "h_date_in", "h_time_focus"])
        #expect(c.context["date"] == "2025-12-01")
        #expect(c.context["system"]?["dialog_stack"]?[0]?["slot_in_focus"] == "s_time")
        // Not understood: the nomatch response stands in for the prompt; the frame keeps the input.
        let miss = try c.say("whenever", intent: "other")
        #expect(miss.text == ["Please say a time, like 7pm."])
        let done = try c.say(entities: [("sys-time", "19:00:00")])
        #expect(done.text == ["Table at 19:00:00 on 2025-12-01."])
        #expect(done.nodesVisited == ["book", "s_time", "h_time_in"])
        #expect(c.context["booked"] == true)
        #expect(c.context["note"] == nil)
        #expect(c.context["system"]?["dialog_stack"] == [["dialog_node": "root"]])
    }

    @Test("a frame with every slot given at once answers in one turn")
    func slotsAllAtOnce() throws {
        var c = try Conversation(Self.restaurant)
        c.context = Self.started
        let turn = try c.say(intent: "book", entities: [("sys-date", "2025-12-01"), ("sys-time", "20:00:00"), ("note", "window")])
        #expect(turn.text == ["Table at 20:00:00 on 2025-12-01."])
        #expect(c.context["note"] == "window")
    }

    @Test("slot children of a standard node are dormant and warned about")
    func dormantSlots() throws {
        let engine = try DialogEngine(workspace: dialogWorkspace([
            dnode("n", "#x", text: ["plain"]),
            dnode("s", type: .slot, parent: "n", variable: "$v"),
            dnode("f", type: .eventHandler, parent: "s", text: ["prompt"], event: "focus"),
        ]))
        #expect(engine.warnings.contains { $0.contains("s under a standard node are dormant") })
        var c = Conversation(engine: engine)
        c.context = Self.started
        #expect(try c.say(intent: "x").text == ["plain"])
    }

    @Test("a frame that allows digressions answers a root question, then asks for its slot again when the branch returns", arguments: [
        ("returns", ["book", "hours", "h_time_focus"], "s_time"),
        ("does_not_return", ["book", "hours"], nil as String?),
    ])
    func digression(digressIn: String, visited: [String], focus: String?) throws {
        var nodes = Self.restaurant
        nodes[0].digressOutSlots = "allow_all"
        var hours = dnode("hours", "#hours", text: ["We open at 9."])
        hours.digressIn = digressIn
        nodes.insert(hours, at: 10)
        var c = try Conversation(nodes)
        c.context = Self.started
        try c.say(intent: "book", entities: [("sys-date", "2025-12-01")])
        let turn = try c.say(intent: "hours")
        #expect(turn.nodesVisited == visited)
        #expect(c.context["system"]?["dialog_stack"]?[0]?["slot_in_focus"]?.stringValue == focus)
        // Input that matches nothing but anything_else stays with the frame.
        if focus != nil { #expect(try c.say("hm").text == ["Please say a time, like 7pm."]) }
    }

    @Test("client action parameters are rendered like context values")
    func actionParameters() throws {
        let action = DialogAction(name: "light", parameters: obj(["command": "@command", "level": "<? 2 * 5 ?>"]))
        var c = try Conversation([DialogNode(id: "n", conditions: "true", actions: [action])])
        c.context = Self.started
        let turn = try c.say(entities: [("command", "on")])
        #expect(turn.actions.first?.parameters == obj(["command": "on", "level": 10]))
    }

    static let payment = [
        dnode("pay", "#pay", type: .frame, text: ["Paying $amount from $account."]),
        dnode("s_amount", type: .slot, parent: "pay", variable: "$amount"),
        dnode("a_in", "@sys-number", type: .eventHandler, parent: "s_amount", event: "input"),
        dnode("a_focus", type: .eventHandler, parent: "s_amount", text: ["How much?"], event: "focus"),
        dnode("a_big", "$amount > 100", type: .eventHandler, parent: "s_amount", text: ["That is over your limit."],
              next: NextStep(behavior: .reprompt), event: "filled"),
        dnode("a_ok", "true", type: .eventHandler, parent: "s_amount", text: ["$amount it is."], event: "filled"),
        dnode("s_account", type: .slot, parent: "pay", variable: "$account"),
        dnode("c_in", "@account", type: .eventHandler, parent: "s_account", event: "input"),
        dnode("c_focus", type: .eventHandler, parent: "s_account", text: ["From which account?"], event: "focus"),
        dnode("c_skip", "#dont_care", type: .eventHandler, parent: "s_account", text: ["I'll use checking."],
              context: ["account": "checking"], next: NextStep(behavior: .skipSlot), event: "nomatch"),
        dnode("c_again", "true", type: .eventHandler, parent: "s_account", text: ["Checking or savings?"], event: "nomatch"),
        dnode("help", "#help", type: .eventHandler, parent: "pay", text: ["I need an amount and an account."], event: "generic"),
        dnode("cancel", "#cancel", type: .eventHandler, parent: "pay", text: ["Cancelled."], context: ["amount": 0, "account": "none"],
              next: NextStep(behavior: .skipAllSlots), event: "generic"),
    ]

    @Test("Found responses validate (reprompt clears the slot), Not found responses answer in order, handlers re-prompt")
    func slotHandlers() throws {
        var c = try Conversation(Self.payment)
        c.context = Self.started
        #expect(try c.say(intent: "pay", entities: [("sys-number", "500")]).text == ["That is over your limit.", "How much?"])
        #expect(c.context["amount"] == .null)
        #expect(try c.say(entities: [("sys-number", "50")]).text == ["50 it is.", "From which account?"])
        #expect(try c.say("hm").text == ["Checking or savings?"])
        #expect(try c.say(intent: "help").text == ["I need an amount and an account.", "From which account?"])
        let done = try c.say(intent: "dont_care")
        #expect(done.text == ["I'll use checking.", "Paying 50 from checking."])
        #expect(c.context["system"]?["dialog_stack"] == [["dialog_node": "root"]])
    }

    @Test("a handler with skip_all_slots goes straight to the frame's response")
    func skipAllSlots() throws {
        var c = try Conversation(Self.payment)
        c.context = Self.started
        try c.say(intent: "pay")
        #expect(try c.say(intent: "cancel").text == ["Cancelled.", "Paying 0 from none."])
    }

    @Test("a jump_to cycle stops at the per-turn bound with a log message", arguments: [NextStep.Selector.body, .condition])
    func loopBound(selector: NextStep.Selector) throws {
        var c = try Conversation([
            dnode("a", "true", text: ["a"], next: NextStep(behavior: .jumpTo, selector: selector, dialogNode: "b")),
            dnode("b", "true", text: ["b"], next: NextStep(behavior: .jumpTo, selector: selector, dialogNode: "a")),
        ])
        c.context = Self.started
        let turn = try c.say()
        #expect(turn.nodesVisited.count == 64)
        #expect(turn.logMessages.count == 1)
        #expect(turn.logMessages.first?["level"] == "warn")
    }

    @Test("a condition that does not parse names the node and the field")
    func compileError() {
        #expect {
            _ = try DialogEngine(workspace: dialogWorkspace([dnode("ok", "true"), dnode("bad", "#a && (")]))
        } throws: { error in
            "\(error)".hasPrefix("dialog_nodes[1] (bad).conditions:")
        }
    }

    @Test("the context round-trips: counters advance, conversation_id is kept")
    func contextRoundTrip() throws {
        var c = try Conversation([dnode("n", "true", text: ["hi"])])
        try c.start()
        let id = try #require(c.context["conversation_id"]?.stringValue)
        try c.say()
        try c.say()
        #expect(c.context["conversation_id"]?.stringValue == id)
        #expect(c.context["system"]?["dialog_turn_counter"] == 3)
        #expect(c.context["system"]?["dialog_request_counter"] == 3)
    }

    @Test("messageResponse has Watson's /message shape")
    func messageShape() throws {
        var c = try Conversation([DialogNode(id: "n", conditions: "#go", output: ["text": "Done.", "ui_action": ["x": "@thing"]],
                                             actions: [DialogAction(name: "light", parameters: obj(["command": "on"]))])])
        c.context = Self.started
        let u = understanding("go", intent: "go", entities: [("thing", "lamp")])
        let turn = try c.say(u)
        let body = messageResponse(understanding: u, turn: turn, alternateIntents: false)
        #expect(body["output"]?["text"] == ["Done."])
        #expect(body["output"]?["nodes_visited"] == ["n"])
        #expect(body["output"]?["ui_action"] == ["x": "lamp"])
        #expect(body["output"]?["actions"]?[0]?["name"] == "light")
        #expect(body["intents"]?[0]?["intent"] == "go")
        #expect(body["input"]?["text"] == "go")
        #expect(body["alternate_intents"] == false)
        #expect(body["context"]?["system"]?["dialog_turn_counter"] == 2)
    }
}
