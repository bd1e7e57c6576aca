import Foundation
import Testing

@testable import HarkCore

@Suite("Intents that take free words")
struct FreeTextIntentTests {
    @Test("home.json: announcing and dropping in read the user's own words; switching the light does not")
    func home() throws {
        let home = try Workspace.load(from: Fixtures.home)
        #expect(home.freeTextIntents == ["Announce", "DropIn"])
    }

    @Test("A node under the intent's node counts, as do output and context; disabled nodes, other text and unknown intents do not")
    func rules() {
        let workspace = Workspace(
            name: "notes",
            intents: ["Note", "Remind", "Light", "Echo"].map { Intent(name: $0, examples: [IntentExample(text: "x \($0)")]) },
            dialogNodes: [
                DialogNode(id: "note", conditions: "#Note && !@nothing"),
                DialogNode(id: "note_saved", type: .responseCondition, parent: "note", output: ["text": "Noted: <? input.text ?>"]),
                DialogNode(id: "remind", conditions: "#Remind || #Ghost", context: ["what": "<? input.text.substring(10, 40) ?>"]),
                DialogNode(id: "light", previousSibling: "remind", conditions: "#Light", output: ["text": "input text is fine"],
                           actions: [DialogAction(name: "light", parameters: ["state": "on"])]),
                DialogNode(id: "echo", conditions: "#Echo", output: ["text": "<? input.text ?>"], disabled: true),
            ])
        #expect(workspace.freeTextIntents == ["Note", "Remind"])
    }
}
