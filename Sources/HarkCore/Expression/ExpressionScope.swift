import Foundation

/// Everything a condition or `<? ?>` expression can read during one dialog turn.
///
/// The expression language (Watson's SpEL subset) evaluates against this value; the dialog runtime builds
/// one per turn and updates `context` as nodes fire.
public struct ExpressionScope: Sendable {
    /// The user's input text (`input.text`).
    public var inputText: String
    /// Intents as the dialog sees them: highest first, those under 0.2 already removed.
    public var intents: [IntentScore]
    /// Entities found in the input, in input order.
    public var entities: [EntityMatch]
    /// Context variables (`$name`, `context['name']`).
    public var context: JSONObject
    /// The clock for `now()` and relative dates.
    public var now: Date
    public var timeZone: TimeZone

    public init(
        inputText: String = "", intents: [IntentScore] = [], entities: [EntityMatch] = [],
        context: JSONObject = JSONObject(), now: Date = Date(), timeZone: TimeZone = .current
    ) {
        self.inputText = inputText
        self.intents = intents
        self.entities = entities
        self.context = context
        self.now = now
        self.timeZone = timeZone
    }
}
