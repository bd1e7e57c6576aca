import Foundation
import HarkAudio
import Testing
@testable import HarkCore

/// A scripted conversation over IBM's car-dashboard export. The matcher is not under test: each turn
/// feeds the intent and entities Watson would have found.
@Suite("Dialog over car-dashboard.json")
struct DialogCarDashboardTests {
    static let url = Fixtures.watson("car-dashboard")

    static func load() throws -> (Workspace, DialogEngine) {
        let workspace = try Workspace.load(from: url)
        return (workspace, try DialogEngine(workspace: workspace))
    }

    /// Every output text of `nodeID` must be one of its `values` once rendered: check the fixed prefix.
    static func values(_ workspace: Workspace, _ nodeID: String) -> [String] {
        guard let node = workspace.dialogNodes.first(where: { $0.id == nodeID }), let output = node.output else { return [] }
        if let generic = output["generic"]?.arrayValue {
            return generic.flatMap { ($0["values"]?.arrayValue ?? []).compactMap { $0["text"]?.stringValue } }
        }
        if let s = output["text"]?.stringValue { return [s] }
        return (output["text"]?["values"]?.arrayValue ?? []).compactMap(\.stringValue)
    }

    /// True when `text` could be a rendering of `template`: the literal text before the first substitution matches.
    static func renders(_ text: String, from template: String) -> Bool {
        let stop = template.firstIndex { $0 == "$" || $0 == "@" || $0 == "<" } ?? template.endIndex
        return text.hasPrefix(template[..<stop])
    }

    func expectOutput(_ turn: DialogTurn, from workspace: Workspace, node: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let candidates = Self.values(workspace, node)
        #expect(turn.text.contains { t in candidates.contains { Self.renders(t, from: $0) } }, "\(turn.text) not from \(node)", sourceLocation: sourceLocation)
    }

    @Test("the export compiles; what Hark cannot run is named in warnings")
    func compiles() throws {
        let (_, engine) = try Self.load()
        #expect(engine.warnings.contains { $0.contains("node_2_1530146783344") && $0.contains("dormant") })
        #expect(engine.warnings.contains { $0.contains("digress_in") })
    }

    @Test("greeting, anything_else counting with <?$default_counter+1?>, and the reset after three misses")
    func defaultCounter() throws {
        let (ws, engine) = try Self.load()
        var c = Conversation(engine: engine)
        let hello = try c.start()
        #expect(hello.nodesVisited == ["Start And Initialize Context"])
        expectOutput(hello, from: ws, node: "Start And Initialize Context")
        #expect(c.context["default_counter"] == 0)
        #expect(c.context["lightonoff"] == "off")
        for expected in [1, 2] {
            let miss = try c.say("blah")
            #expect(miss.nodesVisited == ["node_2_1487280430136", "node_1_1467919680248", "node_12_1485227162156"])
            expectOutput(miss, from: ws, node: "node_12_1485227162156")
            #expect(c.context["default_counter"] == .number(Double(expected)))
        }
        let third = try c.say("blah")
        #expect(third.nodesVisited == ["node_2_1487280430136", "node_1_1467919680248", "node_13_1485227255152"])
        expectOutput(third, from: ws, node: "node_13_1485227255152")
        #expect(c.context["default_counter"] == 0)
    }

    @Test("turn on / turn off the lights: skip_user_input, jump_to condition, response conditions on context")
    func lights() throws {
        let (ws, engine) = try Self.load()
        var c = Conversation(engine: engine)
        try c.start()
        let on = try c.say("turn on the lights", intent: "turn_on", entities: [("appliance", "lights")])
        #expect(on.nodesVisited == ["node_2_1530146783344", "node_4_1530146887532", "node_14_1530146887536"])
        #expect(on.text == ["I'll turn on the lights for you."])
        #expect(c.context["lightonoff"] == "on")
        let again = try c.say("turn on the lights", intent: "turn_on", entities: [("appliance", "lights")])
        #expect(again.nodesVisited.last == "node_13_1530146887536")
        expectOutput(again, from: ws, node: "node_13_1530146887536")
        let off = try c.say("lights off", intent: "turn_off", entities: [("appliance", "lights")])
        #expect(off.nodesVisited == ["node_2_1530149871194", "node_4_1530146887532", "node_16_1530146887536"])
        #expect(c.context["lightonoff"] == "off")
        #expect(c.context["appl_action"] == "off")
    }

    @Test("restaurant: cuisine, location, then date and time collected by the frame's slots")
    func restaurant() throws {
        let (ws, engine) = try Self.load()
        var c = Conversation(engine: engine)
        try c.start()
        let find = try c.say("find a restaurant", intent: "locate_amenity", entities: [("amenity", "restaurant")])
        #expect(find.nodesVisited == ["node_7_1467233747449", "node_10_1467233806357"])
        expectOutput(find, from: ws, node: "node_10_1467233806357")
        #expect(find.generic.count == 2)
        #expect(find.extraOutput["ui_action"] == ["restaurant": ""])

        // Out of scope cuisine: jump_to user_input sends the next answer back to "Check For Food Type Mentioned".
        let sushi = try c.say("sushi", entities: [("cuisine_out_of_scope", "sushi")])
        #expect(sushi.nodesVisited == ["node_9_1468364300050"])
        #expect(c.context["system"]?["dialog_stack"] == [["dialog_node": "node_13_1467234287024"]])

        let tacos = try c.say("tacos", entities: [("cuisine", "tacos")])
        #expect(tacos.nodesVisited == ["node_13_1467234287024"])
        expectOutput(tacos, from: ws, node: "node_13_1467234287024")
        #expect(c.context["previous_cuisine"] == "tacos")

        let pick = try c.say("number 2", entities: [("sys-number", "2")])
        #expect(pick.nodesVisited == [
            "node_21_1488771735577", "node_6_1488752733255", "Restaurant Date Time Collection", "handler_15_1498102011450",
        ])
        #expect(pick.text == ["Sure! Restaurant 2 gets great reviews.", "What day, or date, would you like to go to the restaurant?"])

        let day = try c.say("tomorrow", entities: [("sys-date", "2025-12-01")])
        #expect(day.nodesVisited == ["Restaurant Date Time Collection", "slot_13_1498102011450", "handler_14_1498102011450", "handler_18_1498102038274"])
        #expect(day.text == ["What time would you like to go to the restaurant?"])
        #expect(c.context["date"] == "2025-12-01")

        let time = try c.say("7pm", entities: [("sys-time", "19:00:00")])
        #expect(time.nodesVisited == [
            "Restaurant Date Time Collection", "slot_16_1498102038274", "handler_17_1498102038274", "node_3_1505965136418",
        ])
        expectOutput(time, from: ws, node: "Restaurant Date Time Collection")
        #expect(time.text.first?.contains("7:00 PM") == true)
        #expect(c.context["previous_restaurant_date"] == "2025-12-01")
        #expect(c.context["previous_restaurant_time"] == "19:00:00")
        // The frame's skip_user_input child clears the slots for next time.
        #expect(c.context["date"] == .null)
        #expect(c.context["time"] == .null)

        // Next time, the previous cuisine is offered first.
        let again = try c.say("find a restaurant", intent: "locate_amenity", entities: [("amenity", "restaurant")])
        #expect(again.nodesVisited == ["node_7_1467233747449", "node_2_1505947796902"])
        #expect(again.text == ["Last time you had tacos, would you like that again?"])
    }

    @Test("gas station: an invalid number jumps back to the list (jump_to body)")
    func gasStation() throws {
        let (ws, engine) = try Self.load()
        var c = Conversation(engine: engine)
        try c.start()
        try c.say("gas", intent: "locate_amenity", entities: [("amenity", "gas")])
        let bad = try c.say("number 9", entities: [("sys-number", "9")])
        #expect(bad.nodesVisited == ["node_17_1467234455512", "node_11_1529550099848", "node_9_1467233775768"])
        expectOutput(bad, from: ws, node: "node_11_1529550099848")
        let good = try c.say("number 3", entities: [("sys-number", "3")])
        #expect(good.nodesVisited == ["node_17_1467234455512", "node_4_1488752569375"])
        #expect(good.text == ["Sure! Navigating to gas station 3 on the list."])
    }

    @Test("a car-dashboard turn is cheap once compiled")
    func speed() throws {
        let (_, engine) = try Self.load()
        var c = Conversation(engine: engine)
        try c.start()
        let u = understanding("blah")
        let n = 2000
        // This thread's processor time, so that other work on the machine cannot fail the guard.
        let start = ThreadTime.cpuSeconds()
        for _ in 0..<n { _ = engine.respond(to: u, context: c.context, now: c.now, random: &c.random) }
        let perTurn = (ThreadTime.cpuSeconds() - start) / Double(n)
        print("car-dashboard anything_else turn: \(perTurn * 1000) ms of processor time")
        #expect(perTurn < 0.002)  // generous for debug builds; release is measured separately
    }
}
