import Foundation

/// The text path of the appliance: a workspace's matcher and dialog, joined the way Watson's `/message` is.
///
/// Stateless between turns: the conversation lives in the context the caller passes back, so the CLI,
/// the HTTP API and the voice loop share this one type and a conversation can move between them.
public struct Assistant: Sendable {
    public let workspace: Workspace
    public let matcher: Matcher
    public let dialog: DialogEngine

    /// What one turn produced: the matcher's reading, the dialog's answer and the Watson response body.
    public struct Reply: Sendable {
        public var understanding: Understanding
        public var turn: DialogTurn
        public var response: JSONValue
    }

    public init(workspace: Workspace) throws(DialogCompileError) {
        self.workspace = workspace
        matcher = Matcher(workspace: workspace)
        dialog = try DialogEngine(workspace: workspace)
    }

    /// Everything the workspace loads but cannot run: the loader's warnings and the dialog's.
    public var warnings: [String] { workspace.warnings + dialog.warnings }

    /// The first turn (`conversation_start` / `welcome`), before the user says anything.
    public func start(
        context: JSONObject = JSONObject(), now: Date = Date(), random: inout some RandomNumberGenerator,
        performer: (any DialogActionPerformer)? = nil
    ) -> Reply {
        let understanding = Understanding(text: "", intents: [], entities: [])
        let turn = dialog.start(context: context, now: now, random: &random, performer: performer)
        return Reply(understanding: understanding, turn: turn, response: messageResponse(understanding: understanding, turn: turn, alternateIntents: false))
    }

    /// One user turn: understand `text`, run the dialog with `context`, build Watson's response. With a
    /// `performer` the dialog's client actions run on the devices as their nodes fire.
    public func message(
        _ text: String, context: JSONObject, alternateIntents: Bool = false, now: Date = Date(),
        timeZone: TimeZone = .current, random: inout some RandomNumberGenerator,
        performer: (any DialogActionPerformer)? = nil
    ) -> Reply {
        let understanding = matcher.understand(text, now: now, timeZone: timeZone)
        let turn = dialog.respond(to: understanding, context: context, now: now, random: &random, performer: performer)
        return Reply(understanding: understanding, turn: turn, response: messageResponse(understanding: understanding, turn: turn, alternateIntents: alternateIntents))
    }
}
