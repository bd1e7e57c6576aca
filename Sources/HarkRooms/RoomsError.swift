/// Why a rooms request was refused, shaped for the HTTP answer: a status, the API's error code
/// (docs/server-api.md) and a message that names the field, the room or the rule.
public struct RoomsError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// 400: a missing, empty, oversize or mistyped field; `field` names it.
        case badInput(field: String)
        /// 403: the caller may not do this (delete another's room, use rooms without a name).
        case forbidden
        /// 404: no room (or member) with that id.
        case notFound
        /// 409: the request does not fit the member's state (leaving a room not joined).
        case conflict
        /// 410: the room has closed (idle or deleted); its id will not come back.
        case closed
        /// 500: the rooms database could not be read or written (the message names the file).
        case storage
    }

    public var kind: Kind
    public var message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    /// The HTTP status of the refusal.
    public var status: Int {
        switch kind {
        case .badInput: return 400
        case .forbidden: return 403
        case .notFound: return 404
        case .conflict: return 409
        case .closed: return 410
        case .storage: return 500
        }
    }

    /// The API's error code.
    public var code: String {
        switch kind {
        case .badInput: return "bad_request"
        case .forbidden: return "forbidden"
        case .notFound: return "not_found"
        case .conflict: return "conflict"
        case .closed: return "gone"
        case .storage: return "internal"
        }
    }

    public var description: String { "\(status) \(code): \(message)" }
}
