import Foundation
import Testing
@testable import HarkCore

/// Client actions run through a performer as their nodes fire (docs/device-actions.md).
@Suite("Dialog actions with a performer")
struct DialogActionTests {
    /// A light that remembers its state, and a camera that fails on demand: the performer the appliance plugs in.
    final class Bench: DialogActionPerformer {
        var light = false
        var performed: [String] = []
        var cameraBroken = false
        func perform(_ action: DialogAction) throws(DialogActionFailure) -> JSONValue {
            let command = action.parameters["command"]?.stringValue ?? ""
            performed.append("\(action.name) \(command)")
            switch (action.name, command) {
            case ("light", "on"): light = true
            case ("light", "off"): light = false
            case ("camera", "capture"):
                if cameraBroken { throw DialogActionFailure("camera: device busy") }
                return .string("/pictures/1.jpg")
            default: throw DialogActionFailure("no device named \"\(action.name)\"")
            }
            return .string(light ? "on" : "off")
        }
    }

    @Test("home.json: the light action runs, its real state lands in result_variable, the reply follows")
    func lightRuns() throws {
        let assistant = try Assistant(workspace: Workspace.load(from: Fixtures.home))
        let bench = Bench()
        var random = SplitMix64(seed: 1)
        let start = assistant.start(random: &random, performer: bench)
        let on = assistant.message("turn on the light", context: start.turn.context, random: &random, performer: bench)
        #expect(bench.light)
        #expect(bench.performed == ["light on"])
        #expect(on.turn.context["light_state"] == "on")
        #expect(on.turn.text == ["Light is on"])
        let off = assistant.message("switch the light off", context: on.turn.context, random: &random, performer: bench)
        #expect(!bench.light)
        #expect(off.turn.context["light_state"] == "off")
    }

    @Test("a failing device leaves result_variable untouched and says why in log_messages")
    func failureIsLogged() throws {
        let assistant = try Assistant(workspace: Workspace.load(from: Fixtures.home))
        let bench = Bench()
        bench.cameraBroken = true
        var random = SplitMix64(seed: 1)
        let start = assistant.start(random: &random, performer: bench)
        let reply = assistant.message("take a picture", context: start.turn.context, random: &random, performer: bench)
        #expect(bench.performed == ["camera capture"])
        #expect(reply.turn.context["last_picture"] == nil)
        let messages = reply.turn.logMessages.compactMap { $0["msg"]?.stringValue }
        #expect(messages.contains { $0.contains("camera: device busy") && $0.contains("take_picture") }, "\(messages)")
    }

    @Test("without a performer nothing runs and the actions are only returned, as Watson does")
    func withoutPerformer() throws {
        let assistant = try Assistant(workspace: Workspace.load(from: Fixtures.home))
        var random = SplitMix64(seed: 1)
        let start = assistant.start(random: &random)
        let reply = assistant.message("turn on the light", context: start.turn.context, random: &random)
        #expect(reply.turn.actions.map(\.name) == ["light"])
        #expect(reply.turn.context["light_state"] == nil)
    }

    /// The `room` action as `ApplianceMember` answers it: one open room, "Kitchen"; the appliance in no room at first.
    final class RoomBench: DialogActionPerformer {
        var inRoom: String?
        var asked: [JSONObject] = []

        func perform(_ action: DialogAction) throws(DialogActionFailure) -> JSONValue {
            guard action.name == "room" else { throw DialogActionFailure("no device named \"\(action.name)\"") }
            asked.append(action.parameters)
            switch action.parameters["command"]?.stringValue {
            case "join":
                let named = [action.parameters["room"], action.parameters["said"], action.parameters["text"]].compactMap { $0?.stringValue?.lowercased() }
                guard named.contains(where: { $0.contains("kitchen") }) else {
                    let said = action.parameters["said"]?.stringValue ?? ""
                    return said.isEmpty ? ["status": "no_room", "message": "no open room was named"]
                        : ["status": "no_room", "asked": .string(said), "message": "no such room"]
                }
                inRoom = "Kitchen"
                return ["status": "joined", "room": "Kitchen", "message": "joined Kitchen"]
            case "leave":
                guard let room = inRoom else { return ["status": "not_in_room", "message": "not in a room"] }
                inRoom = nil
                return ["status": "left", "room": .string(room), "message": .string("left \(room)")]
            case "announce":
                let text = action.parameters["text"]?.stringValue ?? ""
                return text.isEmpty ? ["status": "no_text", "message": "nothing to announce"]
                    : ["status": "announced", "asked": .string(text), "message": "announced"]
            default: throw DialogActionFailure("unknown command")
            }
        }
    }

    /// A home.json conversation whose actions `bench` performs: text in, the reply's texts out.
    static func conversation(with bench: RoomBench) throws -> (String) -> [String] {
        let assistant = try Assistant(workspace: Workspace.load(from: Fixtures.home))
        var random = SplitMix64(seed: 1)
        var context = assistant.start(random: &random, performer: bench).turn.context
        return { text in
            let reply = assistant.message(text, context: context, random: &random, performer: bench)
            context = reply.turn.context
            return reply.turn.text
        }
    }

    @Test("home.json: drop in and hang up run the room action and answer from its outcome")
    func roomActions() throws {
        let bench = RoomBench()
        let say = try Self.conversation(with: bench)
        #expect(say("hang up") == ["You are not in a room."])
        #expect(say("drop in on the garage") == ["There is no room called garage."])
        #expect(bench.asked.last?["room"] == "garage" && bench.asked.last?["text"] == "drop in on the garage", "\(bench.asked)")
        #expect(say("drop in on the kitchen") == ["Joining Kitchen."])
        #expect(bench.inRoom == "Kitchen")
        #expect(say("drop in") == ["Which room? Say \"drop in on the kitchen\", with the room's name."])
        #expect(say("leave the room") == ["Leaving Kitchen."])
        #expect(bench.inRoom == nil)
    }

    @Test("home.json: \"announce …\" hands the room action the words after the carrier, and says them back")
    func announceAction() throws {
        let bench = RoomBench()
        let say = try Self.conversation(with: bench)
        for (said, text) in [("announce that dinner is ready", "dinner is ready"),
                             ("Please announce to everyone that the car is here", "the car is here"),
                             ("tell everyone we are leaving in five minutes", "we are leaving in five minutes"),
                             ("make an announcement that it is bedtime", "it is bedtime"),
                             ("broadcast: the pizza has arrived", "the pizza has arrived")] {
            #expect(say(said) == ["Announcing: \(text)."], "\(said)")
            #expect(bench.asked.last?["command"] == "announce" && bench.asked.last?["text"]?.stringValue == text, "\(said): \(bench.asked.last ?? [:])")
        }
        #expect(say("make an announcement") == ["What should I announce? Say \"announce\" and then the words."])
    }

    @Test("result_variable spellings", arguments: [("$x", "x"), ("context.x", "x"), ("x", "x"), (" $context.x ", "x")])
    func spellings(spelled: String, name: String) {
        #expect(contextVariableName(spelled) == name)
    }
}
