import Foundation
import HarkAppliance
import HarkCore
import HarkHTTP

/// The drop-in app's endpoints (docs/server-api.md, "Rooms"): `POST /auth` to pick the name others see,
/// and `/rooms` to list, create, join, leave, see the members of and delete rooms. Every route of the rooms
/// app is registered here (`register(on:)`), called from `CompanionAPI.router`, whose middleware has
/// already refused requests without a valid token.
public struct RoomsAPI: Sendable {
    public let rooms: Rooms
    public let access: any RoomsAccess
    /// The live audio (`WS /rooms/{id}/audio`) and its mixing thread.
    public let audio: RoomAudio

    /// - Parameter audio: the rooms' audio engine; by default a new one over `rooms`.
    public init(rooms: Rooms, access: any RoomsAccess, audio: RoomAudio? = nil) {
        self.rooms = rooms
        self.access = access
        self.audio = audio ?? RoomAudio(rooms: rooms)
    }

    /// Adds the rooms app's routes.
    public func register(on router: inout Router) {
        router.route("POST", "/auth") { request, _ in self.pickName(request) }
        router.route("GET", "/rooms") { request, _ in
            self.asPerson(request) { _ throws(RoomsError) in .json(200, .array(try rooms.openRooms().map(\.json))) }
        }
        router.route("POST", "/rooms") { request, _ in
            self.asPersonWithBody(request) { person, body throws(RoomsError) in
                let name = try Self.string(body, "display_name")
                return .json(201, ["id": .string(try rooms.create(displayName: name, creator: person).id)])
            }
        }
        router.route("DELETE", "/rooms/{id}") { request, parameters in
            self.asPerson(request) { person throws(RoomsError) in
                let id = parameters["id"] ?? ""
                try rooms.delete(room: id, by: person)
                return .json(200, ["deleted": true, "id": .string(id)])
            }
        }
        router.route("POST", "/rooms/{id}/join") { request, parameters in
            self.asPerson(request) { person throws(RoomsError) in .json(200, try rooms.join(room: parameters["id"] ?? "", member: person).json) }
        }
        router.route("POST", "/rooms/{id}/leave") { request, parameters in
            self.asPerson(request) { person throws(RoomsError) in .json(200, try rooms.leave(room: parameters["id"] ?? "", member: person).json) }
        }
        router.route("GET", "/rooms/{id}/members") { request, parameters in
            self.asPerson(request) { _ throws(RoomsError) in .json(200, .array(try rooms.members(of: parameters["id"] ?? "").map(\.json))) }
        }
        router.route("POST", "/rooms/{id}/appliance") { request, parameters in
            self.asPersonWithBody(request) { person, body throws(RoomsError) in
                try self.moveAppliance(room: parameters["id"] ?? "", by: person, body: body)
            }
        }
        router.webSocket("/rooms/{id}/audio") { request, parameters in self.audioSocket(request, room: parameters["id"] ?? "") }
    }

    /// `POST /rooms/{id}/appliance {"action": "join"|"leave"}`: a joined member brings the appliance (its
    /// microphone and speaker) into the room, or sends it out. 409 where the server has no appliance (`hark
    /// serve`) or, leaving, when the appliance is not in this room; joining while it is in another room moves it.
    /// Answers `{"status", "room_id", "member"}`, the appliance's entry as `GET /rooms/{id}/members` lists it.
    private func moveAppliance(room id: String, by person: String, body: JSONObject) throws(RoomsError) -> HTTPResponse {
        let action = try Self.string(body, "action")
        guard action == "join" || action == "leave" else {
            throw RoomsError(.badInput(field: "action"), "action must be \"join\" or \"leave\", not \"\(action)\"")
        }
        guard let room = rooms.room(id) else { throw RoomsError(.notFound, "no room \"\(id)\"") }
        try Rooms.requireOpen(room)
        guard rooms.isJoined(person, in: id) else {
            throw RoomsError(.forbidden, "only joined members of room \"\(id)\" may bring the appliance in or send it out: POST /rooms/\(id)/join first")
        }
        guard let appliance = audio.appliance else {
            throw RoomsError(.conflict, "this server has no appliance to bring in (hark serve has no microphone or speaker; hark run has)")
        }
        let outcome: RoomOutcome
        if action == "join" {
            outcome = try appliance.join(roomID: id)
        } else {
            guard appliance.currentRoom?.id == id else { throw RoomsError(.conflict, "the appliance is not in room \"\(id)\"") }
            outcome = appliance.leave()
            if outcome.status == .failed { throw RoomsError(.storage, outcome.message) }
        }
        let member = try rooms.members(of: id).first { $0.id == Rooms.applianceID }
        return .json(200, ["status": .string(outcome.status.rawValue), "room_id": .string(id), "member": member?.json ?? .null])
    }

    /// The upgrade of `WS /rooms/{id}/audio`: only a joined member of an open room gets a socket (403 for
    /// anyone else, 404 for no such room, 410 for a closed one). Memory lookups only: this runs on the network
    /// thread.
    private func audioSocket(_ request: HTTPRequest, room id: String) -> WebSocketUpgrade {
        switch joinedMember(request, room: id, to: "use its audio") {
        case .success(let person): .accept(access.tokenBound(RoomAudioSocket(audio: audio, room: id, member: person), request: request))
        case .failure(let refusal): .refuse(refusal.response)
        }
    }

    /// The person behind `request` if they are a joined member of the open room `id`, else the answer refusing
    /// them (401 no token, 403 no name or not joined — `purpose` says what only members may do —, 404 no such
    /// room, 410 closed). Memory lookups only, so socket upgrades on the network thread may call it.
    public func joinedMember(_ request: HTTPRequest, room id: String, to purpose: String) -> Result<String, Refusal> {
        var member: String?
        let answer = asPerson(request) { person throws(RoomsError) in
            guard let room = rooms.room(id) else { throw RoomsError(.notFound, "no room \"\(id)\"") }
            try Rooms.requireOpen(room)
            guard rooms.isJoined(person, in: id) else {
                throw RoomsError(.forbidden, "only joined members of room \"\(id)\" may \(purpose): POST /rooms/\(id)/join first")
            }
            member = person
            return .json(200, ["member": .string(person)])
        }
        return member.map { .success($0) } ?? .failure(Refusal(response: answer))
    }

    /// Why `joinedMember` refused, as the HTTP answer to give.
    public struct Refusal: Error {
        public let response: HTTPResponse
    }

    static func response(_ error: RoomsError) -> HTTPResponse {
        .error(error.status, code: error.code, message: error.message)
    }

    /// `body[field]` as a string, or a 400 naming the field.
    static func string(_ body: JSONObject, _ field: String) throws(RoomsError) -> String {
        guard let value = body[field] else { throw RoomsError(.badInput(field: field), "the body needs \"\(field)\"") }
        guard let text = value.stringValue else { throw RoomsError(.badInput(field: field), "\(field) must be a string, not \(value.typeName)") }
        return text
    }

    /// `POST /auth {"name"}`: the caller's device token (or a person's, to rename) → `{"id", "name", "jwt",
    /// "expires"}`, a token that speaks for this person in rooms.
    private func pickName(_ request: HTTPRequest) -> HTTPResponse {
        guard let caller = access.caller(of: request) else { return .error(401, code: "unauthorized", message: "a paired device's token is needed") }
        switch access.jsonBody(request) {
        case .failure(let failure): return failure.response
        case .success(let body):
            do throws(RoomsError) {
                let name = try Self.string(body, "name")
                // Another Hark appliance joining over the network says so, and is shown as one.
                var kind = RoomMember.Kind.person
                if let value = body["kind"], value != .null {
                    guard let text = value.stringValue, let parsed = RoomMember.Kind(rawValue: text) else {
                        throw RoomsError(.badInput(field: "kind"), "kind: must be \"person\" or \"appliance\"")
                    }
                    kind = parsed
                }
                let id = try rooms.setName(name, person: caller.person, device: caller.subject, kind: kind)
                switch access.issueToken(person: id, for: caller, client: request.remoteAddress) {
                case .failure(let failure): return failure.response
                case .success(let issued):
                    return .json(200, ["id": .string(id), "name": .string(rooms.name(of: id) ?? name), "jwt": .string(issued.token),
                                       "expires": .string(ApplianceEvent.iso8601(issued.expires))])
                }
            } catch {
                return Self.response(error)
            }
        }
    }

    /// Runs `handler` for a person's token (403 for a device's that has not picked a name).
    private func asPerson(_ request: HTTPRequest, _ handler: (String) throws(RoomsError) -> HTTPResponse) -> HTTPResponse {
        guard let caller = access.caller(of: request) else { return .error(401, code: "unauthorized", message: "a token is needed") }
        guard let person = caller.person, rooms.name(of: person) != nil else {
            return .error(403, code: "forbidden", message: "rooms need a name: POST /auth {\"name\"} with this device's token, then use the token it answers")
        }
        do throws(RoomsError) {
            return try handler(person)
        } catch {
            return Self.response(error)
        }
    }

    /// `asPerson` with the request's JSON object body.
    private func asPersonWithBody(_ request: HTTPRequest, _ handler: (String, JSONObject) throws(RoomsError) -> HTTPResponse) -> HTTPResponse {
        asPerson(request) { person throws(RoomsError) in
            switch access.jsonBody(request) {
            case .failure(let failure): return failure.response
            case .success(let object): return try handler(person, object)
            }
        }
    }
}
