import Foundation
import HarkCore
import HarkHTTP

/// Who is calling, as the server's auth knows it: the verified token's subject and expiry.
public struct RoomsCaller: Sendable, Equatable {
    /// `device:ID` (paired), `user:NAME` (logged in) or `person:ID` (a name picked with `POST /auth`).
    public var subject: String
    /// When the caller's token expires; a person's token never outlives the device's it was picked on.
    public var expires: Date
    /// The token's id (`jti`).
    public var tokenID: String

    public init(subject: String, expires: Date, tokenID: String) {
        self.subject = subject
        self.expires = expires
        self.tokenID = tokenID
    }

    /// The subject prefix of a person's token.
    public static let personPrefix = "person:"

    /// The person id, if the token is a person's.
    public var person: String? {
        subject.hasPrefix(Self.personPrefix) ? String(subject.dropFirst(Self.personPrefix.count)) : nil
    }
}

/// What the rooms app needs from the server it runs in, which owns auth: who a request is from, a token for
/// a person, and the server's reading of JSON bodies (so every endpoint refuses the same things the same
/// way). `HarkServer` provides it over its `AuthService`.
public protocol RoomsAccess: Sendable {
    /// The caller of `request`, from its verified token; nil when it has none that is valid.
    func caller(of request: HTTPRequest) -> RoomsCaller?
    /// A token with subject `person:ID` for `person` that expires, and is revoked, with `caller`'s; or the error response.
    func issueToken(person: String, for caller: RoomsCaller, client: String) -> Result<(token: String, expires: Date), HTTPResponseFailure>
    /// `handler`, closed (4401 and the reason) once the token `request` was upgraded with expires or is revoked:
    /// a socket must not outlive the right to open it.
    func tokenBound(_ handler: any WebSocketHandler, request: HTTPRequest) -> any WebSocketHandler
    /// The request's JSON object body, or the 400/415 that says why there is none.
    func jsonBody(_ request: HTTPRequest) -> Result<JSONObject, HTTPResponseFailure>
}

/// A ready HTTP error response, carried through `Result`.
public struct HTTPResponseFailure: Error, Sendable {
    public var response: HTTPResponse

    public init(_ response: HTTPResponse) {
        self.response = response
    }
}
