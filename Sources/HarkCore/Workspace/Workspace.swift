import Foundation

/// An intent workspace in Watson Assistant v1 export format: intents, entities, dialog nodes and counterexamples.
///
/// Loaded unchanged from a Watson export (`Workspace.load(from:)`); fields Hark does not model are kept in
/// `raw` so nothing in the file is lost.
public struct Workspace: Sendable {
    public var name: String
    public var description: String
    public var language: String
    public var intents: [Intent]
    /// Dictionary and pattern entities (those with values).
    public var entities: [EntityDefinition]
    /// System entities switched on by an entry with no values, e.g. `sys-number`.
    public var systemEntities: Set<String>
    public var dialogNodes: [DialogNode]
    public var counterexamples: [String]
    /// The whole document as read, for fields Hark does not model.
    public var raw: JSONValue
    /// Where it was loaded from, for messages; `nil` for in-memory workspaces.
    public var source: String?
    /// Things in the workspace Hark loads but cannot run, each naming what and where.
    public var warnings: [String]

    public init(
        name: String = "", description: String = "", language: String = "en", intents: [Intent] = [],
        entities: [EntityDefinition] = [], systemEntities: Set<String> = [], dialogNodes: [DialogNode] = [],
        counterexamples: [String] = [], raw: JSONValue = .object(JSONObject()), source: String? = nil,
        warnings: [String] = []
    ) {
        self.name = name
        self.description = description
        self.language = language
        self.intents = intents
        self.entities = entities
        self.systemEntities = systemEntities
        self.dialogNodes = dialogNodes
        self.counterexamples = counterexamples
        self.raw = raw
        self.source = source
        self.warnings = warnings
    }
}

/// An intent: what the user wants, learnt from example sentences.
public struct Intent: Sendable, Equatable {
    public var name: String
    public var description: String?
    public var examples: [IntentExample]

    public init(name: String, description: String? = nil, examples: [IntentExample]) {
        self.name = name
        self.description = description
        self.examples = examples
    }
}

/// One training sentence, with optional annotated entity mentions (Watson's contextual entities).
public struct IntentExample: Sendable, Equatable {
    public var text: String
    public var mentions: [Mention]

    public init(text: String, mentions: [Mention] = []) {
        self.text = text
        self.mentions = mentions
    }
}

/// An annotated entity mention inside an example: `text[start..<end]` (character offsets) is an `entity`.
public struct Mention: Sendable, Equatable {
    public var entity: String
    public var start: Int
    public var end: Int

    public init(entity: String, start: Int, end: Int) {
        self.entity = entity
        self.start = start
        self.end = end
    }
}

/// A dictionary or pattern entity.
public struct EntityDefinition: Sendable, Equatable {
    public var name: String
    public var fuzzyMatch: Bool
    public var values: [EntityValue]

    public init(name: String, fuzzyMatch: Bool = false, values: [EntityValue]) {
        self.name = name
        self.fuzzyMatch = fuzzyMatch
        self.values = values
    }
}

/// One value of an entity: recognised by its own text and synonyms, or by regular expressions.
public struct EntityValue: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        case synonyms([String])
        case patterns([String])
    }

    public var value: String
    public var kind: Kind
    public var metadata: JSONValue?

    public init(value: String, kind: Kind, metadata: JSONValue? = nil) {
        self.value = value
        self.kind = kind
        self.metadata = metadata
    }
}

/// A dialog node (Watson v1 `dialog_nodes[]`).
public struct DialogNode: Sendable {
    public enum NodeType: String, Sendable, CaseIterable {
        case standard, frame, slot
        case eventHandler = "event_handler"
        case responseCondition = "response_condition"
        case folder
    }

    public var id: String
    public var type: NodeType
    public var title: String?
    public var parent: String?
    public var previousSibling: String?
    /// The condition expression source, e.g. `#turn_on && @appliance`. `nil` or empty never matches
    /// (except for `response_condition` nodes and event handlers, where it means "always").
    public var conditions: String?
    public var output: JSONValue?
    public var context: JSONObject?
    public var nextStep: NextStep?
    /// Slot nodes: the context variable the slot fills, e.g. `$time`.
    public var variable: String?
    /// Event handlers: `focus`, `input`, `filled`, `nomatch`, ...
    public var eventName: String?
    public var digressIn: String?
    public var digressOut: String?
    public var digressOutSlots: String?
    public var disabled: Bool
    /// Watson client actions (`actions[]`): Hark runs `type: client` actions naming a device.
    public var actions: [DialogAction]
    public var metadata: JSONValue?

    public init(
        id: String, type: NodeType = .standard, title: String? = nil, parent: String? = nil,
        previousSibling: String? = nil, conditions: String? = nil, output: JSONValue? = nil,
        context: JSONObject? = nil, nextStep: NextStep? = nil, variable: String? = nil, eventName: String? = nil,
        digressIn: String? = nil, digressOut: String? = nil, digressOutSlots: String? = nil, disabled: Bool = false,
        actions: [DialogAction] = [], metadata: JSONValue? = nil
    ) {
        self.id = id
        self.type = type
        self.title = title
        self.parent = parent
        self.previousSibling = previousSibling
        self.conditions = conditions
        self.output = output
        self.context = context
        self.nextStep = nextStep
        self.variable = variable
        self.eventName = eventName
        self.digressIn = digressIn
        self.digressOut = digressOut
        self.digressOutSlots = digressOutSlots
        self.disabled = disabled
        self.actions = actions
        self.metadata = metadata
    }
}

/// What happens after a node has answered (`next_step`).
public struct NextStep: Sendable, Equatable {
    public enum Behavior: String, Sendable, CaseIterable {
        case getUserInput = "get_user_input"
        case skipUserInput = "skip_user_input"
        case jumpTo = "jump_to"
        case reprompt
        case skipSlot = "skip_slot"
        case skipAllSlots = "skip_all_slots"
    }

    public enum Selector: String, Sendable, CaseIterable {
        case condition, client, body
        case userInput = "user_input"
    }

    public var behavior: Behavior
    public var selector: Selector?
    public var dialogNode: String?

    public init(behavior: Behavior, selector: Selector? = nil, dialogNode: String? = nil) {
        self.behavior = behavior
        self.selector = selector
        self.dialogNode = dialogNode
    }
}

/// A Watson dialog node action (`actions[]`). Hark runs `client` actions as device commands; the
/// action's `name` names the device and `parameters.command` the command (see docs/device-actions.md).
public struct DialogAction: Sendable, Equatable {
    public var name: String
    public var type: String
    public var parameters: JSONObject
    public var resultVariable: String?

    public init(name: String, type: String = "client", parameters: JSONObject = JSONObject(), resultVariable: String? = nil) {
        self.name = name
        self.type = type
        self.parameters = parameters
        self.resultVariable = resultVariable
    }

    /// The action as Watson returns it in `output.actions`.
    public var json: JSONValue {
        var o = JSONObject()
        o["name"] = .string(name)
        o["type"] = .string(type)
        o["parameters"] = .object(parameters)
        if let resultVariable { o["result_variable"] = .string(resultVariable) }
        return .object(o)
    }
}

extension Workspace {
    /// Whether two intents or more have examples: only then can a sentence be heard as another command than the one
    /// said. Speech gives such a workspace the courtesy words (`SpeechGrammar.Courtesy`) and the second reading
    /// (`SecondReading`); a workspace of one intent (barista.json's orders) writes its openings into its examples and has
    /// nothing for a reading to disagree with.
    public var hasSeveralCommands: Bool {
        intents.filter { !$0.examples.isEmpty }.count >= 2
    }
}
