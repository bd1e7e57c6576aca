import Foundation

/// The root objects an expression can name without a sigil.
enum ExpressionRoot: String, Sendable {
    case context, entities, intents, input, output, intent
}

enum BinaryOperator: String, Sendable {
    case equal = "==", notEqual = "!=", less = "<", lessEqual = "<=", greater = ">", greaterEqual = ">="
    case add = "+", subtract = "-", multiply = "*", divide = "/", remainder = "%", power = "^"
    case matches = "matches"
}

/// Methods resolved at parse time, so evaluation switches on an enum instead of comparing strings.
enum ExpressionMethod: String, Sendable, CaseIterable {
    // strings
    case contains, startsWith, endsWith, indexOf, lastIndexOf, substring, toLowerCase, toUpperCase, trim
    case length, size, isEmpty, equals, equalsIgnoreCase, find, matches, extract, append, split, replace
    case replaceAll, charAt, concat, toString, toDouble, toInt, toLong, getAsString, getAsInt, getAsDouble
    case getAsBoolean, compareTo
    // arrays / objects
    case get, join, has, set, removeValue, getRandomItem
    // dates
    case reformatDateTime, before, after, sameMoment, sameOrBefore, sameOrAfter
    case plusDays, plusMonths, plusYears, plusHours, plusMinutes, plusSeconds, plusWeeks
    case minusDays, minusMonths, minusYears, minusHours, minusMinutes, minusSeconds, minusWeeks
}

/// The parsed form of an expression. Built once by `ExpressionParser`, evaluated many times.
indirect enum ExpressionNode: Sendable {
    case literal(JSONValue)
    case list([ExpressionNode])
    /// `#name`: true when `name` is the top intent.
    case intentTest(String)
    /// `@name`: the first matching entity's value (numeric for number-like system entities), null when absent.
    case entity(String)
    /// `@name:value` / `@name:(multi word)`: true when any match of the entity has that value.
    case entityTest(String, String)
    /// `@name.literal`, `.value`, `.values`, `.location`, `.confidence`, …
    case entityProperty(String, String)
    /// `$name` / `$(name)`.
    case variable(String)
    /// `$name:value`: `context['name'] == 'value'`.
    case variableTest(String, String)
    case root(ExpressionRoot)
    /// `entities['name']` / `entities.name`: the entity objects of that name, null when none.
    case entitiesNamed(String)
    /// An identifier that is no root: a field of the element inside a projection or selection, else an error.
    case identifier(String, offset: Int)
    case this
    case member(ExpressionNode, String, safe: Bool)
    case index(ExpressionNode, ExpressionNode, safe: Bool)
    case method(ExpressionNode, ExpressionMethod, [ExpressionNode], safe: Bool)
    /// A method Hark does not implement; evaluation throws, `unsupportedFeatures` reports it.
    case unknownMethod(ExpressionNode, String, offset: Int)
    case function(String, [ExpressionNode], offset: Int)
    case not(ExpressionNode)
    case negate(ExpressionNode)
    case and(ExpressionNode, ExpressionNode)
    case or(ExpressionNode, ExpressionNode)
    case binary(BinaryOperator, ExpressionNode, ExpressionNode)
    case ternary(ExpressionNode, ExpressionNode, ExpressionNode)
    case elvis(ExpressionNode, ExpressionNode)
    /// `list.![expr]`
    case projection(ExpressionNode, ExpressionNode)
    /// `list.?[expr]` (all), `.^[expr]` (first), `.$[expr]` (last)
    case selection(ExpressionNode, ExpressionNode, SelectionKind)
    /// Java constructs Hark cannot run (`new Foo()`, `T(Math)`): reported, and evaluation throws.
    case unsupported(String, offset: Int)
}

enum SelectionKind: Sendable { case all, first, last }

/// Entity properties reachable with `@name.property`.
let entityPropertyNames: Set<String> = [
    "literal", "value", "values", "location", "confidence", "groups", "metadata", "interpretation", "role",
    "numeric_value", "entity",
]
