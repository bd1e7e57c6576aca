import Foundation

/// What one dialog turn produced: the reply, the nodes that fired and the context to pass back next turn.
public struct DialogTurn: Sendable {
    /// `output.text`: each rendered text response, in the order the nodes fired.
    public var text: [String]
    /// `output.generic`: every response, text ones included as `{response_type: "text", text}` (Watson v1 2018+).
    public var generic: [JSONValue]
    /// Ids of the nodes that fired (including response conditions, slots and handlers), in order.
    public var nodesVisited: [String]
    /// Client actions of the nodes that fired, in order.
    public var actions: [DialogAction]
    /// `{level, msg}` entries for runtime expression errors and stopped loops.
    public var logMessages: [JSONValue]
    /// Output fields other than `text` and `generic` (e.g. car-dashboard's `ui_action`), rendered; later nodes win.
    public var extraOutput: JSONObject
    /// User variables plus `system` state and `conversation_id`: pass it back unchanged with the next input.
    public var context: JSONObject

    public init(
        text: [String] = [], generic: [JSONValue] = [], nodesVisited: [String] = [], actions: [DialogAction] = [],
        logMessages: [JSONValue] = [], extraOutput: JSONObject = JSONObject(), context: JSONObject = JSONObject()
    ) {
        self.text = text
        self.generic = generic
        self.nodesVisited = nodesVisited
        self.actions = actions
        self.logMessages = logMessages
        self.extraOutput = extraOutput
        self.context = context
    }
}

/// A condition or template in the dialog that does not parse; the message names the node and the field.
public struct DialogCompileError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public init(message: String) { self.message = message }
    public var description: String { message }
}

/// Builds Watson's `/message` response body:
/// `{intents, entities, input, output{text, nodes_visited, log_messages, generic, actions?}, context, alternate_intents}`.
public func messageResponse(understanding: Understanding, turn: DialogTurn, alternateIntents: Bool) -> JSONValue {
    var output = JSONObject()
    output["text"] = .array(turn.text.map { .string($0) })
    output["nodes_visited"] = .array(turn.nodesVisited.map { .string($0) })
    output["log_messages"] = .array(turn.logMessages)
    output["generic"] = .array(turn.generic)
    if !turn.actions.isEmpty { output["actions"] = .array(turn.actions.map(\.json)) }
    for (key, value) in turn.extraOutput.pairs where output[key] == nil { output[key] = value }
    var body = JSONObject()
    body["intents"] = .array(understanding.reportedIntents(alternates: alternateIntents).map(\.json))
    body["entities"] = .array(understanding.entities.map(\.json))
    body["input"] = .object(JSONObject([("text", .string(understanding.text))]))
    body["output"] = .object(output)
    body["context"] = .object(turn.context)
    body["alternate_intents"] = .bool(alternateIntents)
    return .object(body)
}
