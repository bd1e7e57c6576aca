import Foundation
import Testing
@testable import HarkCore

/// The whole text path on car-dashboard: the real matcher feeding the dialog, context passed back as JSON.
@Suite("Dialog end to end over car-dashboard.json")
struct DialogEndToEndTests {
    @Test("typed sentences drive the restaurant booking through the matcher and the dialog")
    func restaurantBooking() throws {
        let workspace = try Workspace.load(from: DialogCarDashboardTests.url)
        let matcher = Matcher(workspace: workspace)
        var c = Conversation(engine: try DialogEngine(workspace: workspace))
        try c.start()
        let utc = TimeZone(identifier: "UTC")!
        let script: [(String, String)] = [
            ("turn on the lights", "node_14_1530146887536"),
            ("find me a restaurant", "node_10_1467233806357"),
            ("tacos", "node_13_1467234287024"),
            ("the second one", "handler_15_1498102011450"),  // date prompt
            ("tomorrow", "handler_18_1498102038274"),  // time prompt
            ("at 7pm", "Restaurant Date Time Collection"),
            ("blah blah", "node_12_1485227162156"),
        ]
        for (sentence, node) in script {
            let turn = try c.say(matcher.understand(sentence, now: c.now, timeZone: utc))
            #expect(turn.nodesVisited.contains(node), "\(sentence): \(turn.nodesVisited)")
            #expect(turn.logMessages.isEmpty, "\(sentence): \(turn.logMessages)")
        }
        #expect(c.context["previous_restaurant_date"] == "2025-12-01")
        #expect(c.context["previous_restaurant_time"] == "19:00:00")
    }
}
