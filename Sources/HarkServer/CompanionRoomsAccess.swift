import Foundation
import HarkCore
import HarkHTTP
import HarkRooms

/// The rooms app's view of this server's auth: callers from verified tokens, person tokens from
/// `AuthService`, and `CompanionAPI`'s reading of JSON bodies.
struct CompanionRoomsAccess: RoomsAccess {
    let auth: AuthService
    /// How often an audio socket's token is verified again (`CompanionAPI.tokenCheckInterval`).
    let tokenCheckInterval: Duration

    func caller(of request: HTTPRequest) -> RoomsCaller? {
        guard let token = CompanionAPI.token(of: request), !token.isEmpty,
              let claims = try? auth.verify(token: token) else { return nil }
        return RoomsCaller(subject: claims.subject, expires: claims.expires, tokenID: claims.id)
    }

    func issueToken(person: String, for caller: RoomsCaller, client: String) -> Result<(token: String, expires: Date), HTTPResponseFailure> {
        let basis = JWT.Claims(issuer: auth.issuer, subject: caller.subject, issuedAt: auth.currentTime, expires: caller.expires, id: caller.tokenID)
        do throws(AuthError) {
            let issued = try auth.issue(subject: RoomsCaller.personPrefix + person, basedOn: basis, client: client)
            return .success((issued.token, issued.expires))
        } catch {
            return .failure(HTTPResponseFailure(CompanionAPI.response(error)))
        }
    }

    func tokenBound(_ handler: any WebSocketHandler, request: HTTPRequest) -> any WebSocketHandler {
        CompanionAPI.tokenBound(handler, request: request, auth: auth, checkInterval: tokenCheckInterval)
    }

    func jsonBody(_ request: HTTPRequest) -> Result<JSONObject, HTTPResponseFailure> {
        CompanionAPI.jsonBody(request).mapError { HTTPResponseFailure($0.response) }
    }
}
