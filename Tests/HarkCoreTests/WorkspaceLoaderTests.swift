import Foundation
import Testing
@testable import HarkCore

@Suite struct WorkspaceLoaderTests {
    @Test(arguments: ["car-dashboard", "bank-simple", "serverless-home-automation"])
    func watsonExportsLoad(name: String) throws {
        let ws = try Workspace.load(from: Fixtures.watson(name))
        #expect(!ws.intents.isEmpty)
        #expect(!ws.dialogNodes.isEmpty)
    }

    @Test func carDashboardShape() throws {
        let ws = try Workspace.load(from: Fixtures.watson("car-dashboard"))
        #expect(ws.intents.count == 25)
        #expect(ws.intents.map(\.examples.count).reduce(0, +) == 2506)
        #expect(ws.dialogNodes.count == 144)
        #expect(ws.systemEntities == ["sys-time", "sys-number", "sys-date"])
        #expect(ws.entities.first { $0.name == "appliance" }?.fuzzyMatch == true)
    }

    @Test func unsupportedSystemEntitiesAreWarnedByName() throws {
        let ws = try Workspace.load(from: Fixtures.watson("serverless-home-automation"))
        #expect(ws.warnings.contains { $0.contains("sys-person") })
        #expect(ws.warnings.contains { $0.contains("sys-location") })
    }

    /// Each malformed document must fail with the JSON path and the problem named.
    @Test(arguments: [
        (#"{"intents":[{"intent":"a","examples":[]},{"intent":"a","examples":[]}]}"#, "intents[1].intent: duplicate intent \"a\""),
        (#"{"dialog_nodes":[{"dialog_node":"n1","parent":"nope"}]}"#, "dialog_nodes[0] (n1).parent: refers to missing dialog node \"nope\""),
        (#"{"dialog_nodes":[{"dialog_node":"n1","next_step":{"behavior":"jump_to","selector":"body","dialog_node":"x"}}]}"#,
         "dialog_nodes[0] (n1).next_step.dialog_node: refers to missing dialog node \"x\""),
        (#"{"entities":[{"entity":"e","values":[{"type":"patterns","value":"v","patterns":["(a"]}]}]}"#,
         "entities[0].values[0].patterns[0]: invalid regular expression \"(a\""),
        (#"{"intents":[{"intent":"a","examples":[{"text":5}]}]}"#, "intents[0].examples[0].text: expected a string, found number"),
        (#"{"intents":{}}"#, "intents: expected an array, found object"),
        (#"{"dialog_nodes":[{"dialog_node":"n","type":"weird"}]}"#, "dialog_nodes[0] (n).type: unknown node type \"weird\""),
        (#"{"dialog_nodes":[{"dialog_node":"n","next_step":{"behavior":"fly"}}]}"#, "dialog_nodes[0] (n).next_step.behavior: unknown behavior \"fly\""),
        (#"{"intents":[{"intent":"a","examples":[{"text":"hi","mentions":[{"entity":"e","location":[0,9]}]}]}]}"#,
         "intents[0].examples[0].mentions[0].location: expected [start, end]"),
        (##"{"dialog_nodes":[{"dialog_node":"n","conditions":"#a && (@b"}]}"##, "dialog_nodes[0] (n).conditions: unparsable condition:"),
        (#"[1,2]"#, "expected a workspace object at the top level, found array"),
        ("{\"intents\": [\n  {\"intent\": \"a\",}\n]}", "invalid JSON at line 2, column 18"),
    ])
    func malformedWorkspacesNameThePathAndProblem(json: String, expected: String) {
        do {
            _ = try Workspace.parse(json, source: "bad.json")
            Issue.record("expected an error containing \(expected)")
        } catch {
            #expect(error.file == "bad.json")
            #expect(error.description.contains(expected), "got: \(error.description)")
        }
    }

    @Test func missingFileIsAClearError() {
        #expect(throws: WorkspaceError.self) { try Workspace.load(from: URL(fileURLWithPath: "/nonexistent/ws.json")) }
        do { _ = try Workspace.load(from: URL(fileURLWithPath: "/nonexistent/ws.json")) } catch {
            #expect(error.description == "/nonexistent/ws.json: no such file")
        }
    }
}
