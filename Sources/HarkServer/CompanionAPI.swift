import Foundation
import HarkAppliance
import HarkAudio
import HarkCore
import HarkDevices
import HarkHTTP
import HarkRooms

/// The appliance's API (docs/server-api.md) on a `Router`: pairing and login, Watson's `/message`, the event
/// log and its live socket, pictures, devices, speech out and push-to-talk in. Every handler goes through the
/// same `TurnRunner`, devices and event store as the voice loop, so a web turn is logged, acts and answers
/// exactly like a spoken one.
public final class CompanionAPI: Sendable {
    public let turns: TurnRunner
    public let auth: AuthService
    public let pictures: PictureStore?
    /// Push-to-talk from the browser; nil when the machine has no speech model.
    public let listening: WebListening?
    /// Speaks on the appliance's speaker; nil when it has none.
    public let speak: (@Sendable (String) -> Bool)?
    /// `docs/openapi.json`, served at `/api/openapi.json`.
    public let openAPI: [UInt8]?
    /// The names a browser may reach this server by (`Host`, `Origin`), checked on WebSocket upgrades and on
    /// pairing, login and logout.
    public let hosts: HostPolicy
    /// How often an open WebSocket's token is checked again; it is closed once the token has expired or was
    /// revoked.
    public let tokenCheckInterval: Duration
    /// What one push-to-talk socket may take.
    public let listenLimits: ListenLimits
    /// How many `/message` turns run at once (the others wait their turn in arrival order): one per core.
    public let concurrentTurns: Int
    /// The drop-in rooms app (`RoomsAPI`, under `/auth` and `/rooms`); nil serves without it.
    public let rooms: Rooms?
    /// The rooms' live audio (nil without rooms): `RoomsAPI` serves its sockets, `POST /api/announce` mixes into it.
    public let roomAudio: RoomAudio?
    /// Renders text as 16 kHz mono speech for the rooms (eSpeak NG); nil when no synthesiser is available.
    public let synthesize: (@Sendable (String) -> [Int16]?)?
    /// Plays 16 kHz mono on the appliance's speaker (an announcement in the speaker's own voice); nil when it has none.
    public let play: (@Sendable ([Int16]) -> Bool)?
    let turnGate: TurnGate

    var store: EventStore? { turns.recorder.store }

    public init(
        turns: TurnRunner, auth: AuthService, pictures: PictureStore?, listening: WebListening?,
        speak: (@Sendable (String) -> Bool)?, openAPI: [UInt8]?, hosts: HostPolicy = .local(),
        tokenCheckInterval: Duration = .seconds(5), listenLimits: ListenLimits = ListenLimits(),
        concurrentTurns: Int = ProcessInfo.processInfo.activeProcessorCount, rooms: Rooms? = nil,
        synthesize: (@Sendable (String) -> [Int16]?)? = nil, play: (@Sendable ([Int16]) -> Bool)? = nil
    ) {
        self.turns = turns
        self.auth = auth
        self.pictures = pictures
        self.listening = listening
        self.speak = speak
        self.openAPI = openAPI
        self.hosts = hosts
        self.tokenCheckInterval = tokenCheckInterval
        self.listenLimits = listenLimits
        self.concurrentTurns = max(1, concurrentTurns)
        self.rooms = rooms
        roomAudio = rooms.map { RoomAudio(rooms: $0) }
        self.synthesize = synthesize
        self.play = play
        turnGate = TurnGate(width: concurrentTurns)
    }

    /// Paths that need no token: the page, pairing, login and the API description.
    static func isPublic(_ request: HTTPRequest) -> Bool {
        let p = request.path
        return p == "/" || p.hasPrefix("/web/") || p == "/favicon.ico" || p == "/api/pair" || p == "/api/login" || p == "/api/openapi.json"
    }

    /// The token of a request: `Authorization: Bearer …`, or `?access_token=` on a WebSocket upgrade, where a
    /// browser cannot set headers. Anywhere else a token in the URL is ignored: URLs end up in history, logs
    /// and `Referer`s, and a 30-day token must not.
    static func token(of request: HTTPRequest) -> String? {
        if let header = request.header("authorization") {
            let parts = header.split(separator: " ", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == "bearer" { return String(parts[1]).trimmingWhitespace() }
            return ""
        }
        return request.isWebSocketUpgrade ? request.query["access_token"] : nil
    }

    /// Paths a page on another site must not be able to use through the visitor's browser.
    static func isHostChecked(_ request: HTTPRequest) -> Bool {
        request.isWebSocketUpgrade || ["/api/pair", "/api/login", "/api/logout"].contains(request.path)
    }

    static func response(_ error: AuthError) -> HTTPResponse {
        let r = HTTPResponse.error(error.status, code: error.code, message: error.message)
        return error.retryAfter.map { r.adding(header: "retry-after", value: String($0)) } ?? r
    }

    /// The router with every endpoint, the auth check in front, and the page's files as the fallback.
    public func router(staticFiles: StaticFiles?) -> Router {
        var router = Router(staticFiles: staticFiles)
        let auth = auth
        let hosts = hosts
        // The rooms app: its routes, and the membership check `/api/listen?room=` shares with its audio socket.
        let roomsAccess = CompanionRoomsAccess(auth: auth, tokenCheckInterval: tokenCheckInterval)
        let roomsAPI = rooms.map { RoomsAPI(rooms: $0, access: roomsAccess, audio: roomAudio) }
        router.before { request in
            guard Self.isHostChecked(request), let refusal = hosts.refusal(request) else { return nil }
            return .error(403, code: "forbidden", message: refusal)
        }
        router.before { request in
            if Self.isPublic(request) { return nil }
            guard let token = Self.token(of: request), !token.isEmpty else {
                if request.query["access_token"] != nil {
                    return .error(401, code: "unauthorized", message: "a token in the URL is accepted only on WebSocket upgrades: send it as Authorization: Bearer …")
                }
                return .error(401, code: "unauthorized", message: "a token is needed: pair with the code the appliance shows (POST /api/pair) or log in (POST /api/login)")
            }
            do throws(AuthError) {
                _ = try auth.verify(token: token)
                return nil
            } catch {
                return Self.response(error)
            }
        }
        router.route("POST", "/api/pair") { request, _ in
            self.issue(request) { body throws(AuthError) in
                guard let code = body["code"]?.stringValue else { throw AuthError(.unauthorized, message: "the body needs \"code\": the 6 digits the appliance shows") }
                return try auth.pair(code: code, client: request.remoteAddress)
            }
        }
        router.route("POST", "/api/login") { request, _ in
            self.issue(request) { body throws(AuthError) in
                guard let user = body["user"]?.stringValue, let password = body["password"]?.stringValue else {
                    throw AuthError(.unauthorized, message: "the body needs \"user\" and \"password\"")
                }
                return try auth.login(user: user, password: password, client: request.remoteAddress)
            }
        }
        router.route("POST", "/api/logout") { request, _ in self.logout(request) }
        router.route("POST", "/api/tokens/revoke") { request, _ in self.revoke(request) }
        router.route("GET", "/api/openapi.json") { _, _ in
            guard let openAPI = self.openAPI else { return .error(404, code: "not_found", message: "docs/openapi.json was not found next to the binary") }
            return .bytes(200, "application/json", openAPI)
        }
        router.route("POST", "/v1/workspaces/{workspace_id}/message") { request, parameters in
            self.message(request, workspaceID: parameters["workspace_id"] ?? "")
        }
        router.route("GET", "/api/events") { request, _ in self.events(request) }
        router.webSocket("/api/events") { request, _ in
            guard let store = self.store else { return .refuse(.error(503, code: "unavailable", message: "this server has no event store")) }
            let since = request.query["since"].flatMap { Int64($0) }
            // A person's socket also hears the events of the rooms they are joined to.
            var roomEvents: EventsSocket.RoomEvents?
            if let rooms = self.rooms, let person = roomsAccess.caller(of: request)?.person {
                roomEvents = EventsSocket.RoomEvents(rooms: rooms, member: person)
            }
            return .accept(self.tokenBound(EventsSocket(store: store, since: since, rooms: roomEvents), request: request))
        }
        router.route("GET", "/api/pictures") { _, _ in self.listPictures() }
        router.route("GET", "/api/pictures/{id}") { _, parameters in self.picture(parameters["id"] ?? "") }
        router.route("GET", "/api/devices") { _, _ in self.devices() }
        router.route("POST", "/api/devices/{name}") { request, parameters in self.command(request, device: parameters["name"] ?? "") }
        router.route("POST", "/api/say") { request, _ in self.say(request) }
        router.webSocket("/api/listen") { request, _ in
            guard let listening = self.listening else {
                return .refuse(.error(503, code: "unavailable", message: "this appliance has no speech recogniser (PocketSphinx model missing)"))
            }
            // `?room=ID`: a member of that room asks, and the reply is also said into the room, for everyone there.
            var roomReply: (@Sendable (PCMBuffer) -> Void)?
            if let room = request.query["room"] {
                guard let roomsAPI, let roomAudio = self.roomAudio else {
                    return .refuse(.error(503, code: "unavailable", message: "this server has no room audio to answer into"))
                }
                if case .failure(let refusal) = roomsAPI.joinedMember(request, room: room, to: "have the assistant answer into it") {
                    return .refuse(refusal.response)
                }
                roomReply = { speech in
                    if let samples = try? speech.converted(to: .speech).samples { _ = roomAudio.announce(samples, rooms: [room]) }
                }
            }
            return .accept(self.tokenBound(ListenSocket(listening: listening, turns: self.turns, limits: self.listenLimits, roomReply: roomReply), request: request))
        }
        router.route("POST", "/api/announce") { request, _ in self.announce(request) }
        roomsAPI?.register(on: &router)
        return router
    }

    /// `handler`, closed once the upgrade's token expires or is revoked.
    private func tokenBound(_ handler: any WebSocketHandler, request: HTTPRequest) -> any WebSocketHandler {
        Self.tokenBound(handler, request: request, auth: auth, checkInterval: tokenCheckInterval)
    }

    /// `handler`, closed with 4401 once the token `request` was upgraded with expires or is revoked; checked every
    /// `checkInterval`. The rooms' audio sockets are bound the same way (`CompanionRoomsAccess`).
    static func tokenBound(_ handler: any WebSocketHandler, request: HTTPRequest, auth: AuthService, checkInterval: Duration) -> any WebSocketHandler {
        let token = token(of: request) ?? ""
        return TokenBoundSocket(handler, checkInterval: checkInterval) {
            do throws(AuthError) {
                _ = try auth.verify(token: token)
                return nil
            } catch {
                return error.kind == .unauthorized ? error.message : nil
            }
        }
    }

    // MARK: - Handlers

    /// The request's body as a JSON object, or the 400 that says why it is not one (415 when it is not
    /// labelled `Content-Type: application/json`: a form on another site can post `text/plain` here, but a
    /// browser sends `application/json` across sites only after a CORS preflight, which this server never grants).
    static func jsonBody(_ request: HTTPRequest) -> Result<JSONObject, HTTPResponseError> {
        guard !request.body.isEmpty else { return .failure(HTTPResponseError(.error(400, code: "bad_request", message: "the request needs a JSON body"))) }
        let type = request.header("content-type") ?? ""
        let mediaType = type.split(separator: ";", maxSplits: 1).first.map { $0.trimmingWhitespace().lowercased() } ?? ""
        guard mediaType == "application/json" else {
            return .failure(HTTPResponseError(.error(415, code: "unsupported_media_type",
                                                     message: type.isEmpty ? "the JSON body needs Content-Type: application/json"
                                                         : "Content-Type \"\(type)\" is not accepted: send the JSON body as application/json")))
        }
        do {
            guard let object = try JSONValue.parse(Data(request.body)).objectValue else {
                return .failure(HTTPResponseError(.error(400, code: "bad_request", message: "the body must be a JSON object")))
            }
            return .success(object)
        } catch {
            return .failure(HTTPResponseError(.error(400, code: "bad_request", message: "malformed JSON body: \(error)")))
        }
    }

    /// `handler` with the request's JSON object body, or the 400 that says why there is none.
    static func withJSONBody(_ request: HTTPRequest, _ handler: (JSONObject) -> HTTPResponse) -> HTTPResponse {
        switch jsonBody(request) {
        case .failure(let e): return e.response
        case .success(let object): return handler(object)
        }
    }

    private func issue(_ request: HTTPRequest, _ body: (JSONObject) throws(AuthError) -> AuthService.IssuedToken) -> HTTPResponse {
        Self.withJSONBody(request) { object in
            do throws(AuthError) {
                let token = try body(object)
                return .json(200, ["token": .string(token.token), "expires": .string(ApplianceEvent.iso8601(token.expires))])
            } catch {
                return Self.response(error)
            }
        }
    }

    /// `POST /api/logout`: the request's own token stops working, here and on every open socket.
    private func logout(_ request: HTTPRequest) -> HTTPResponse {
        do {
            let claims = try auth.verify(token: Self.token(of: request) ?? "")
            try auth.revoke(claims, reason: .loggedOut, client: request.remoteAddress)
            return .json(200, ["logged_out": true, "id": .string(claims.id)])
        } catch let error as AuthError {
            return Self.response(error)
        } catch {
            return .error(500, code: "internal", message: "\(error)")
        }
    }

    /// `POST /api/tokens/revoke {"id": "…"}`: the token with that id (`token_id` in `auth` events) stops
    /// working, e.g. the one given to a phone that was lost.
    private func revoke(_ request: HTTPRequest) -> HTTPResponse {
        Self.withJSONBody(request) { body in
            // A dot joins the two ids of a person's token from POST /auth (`AuthService.issue(subject:basedOn:)`).
            guard let id = body["id"]?.stringValue, !id.isEmpty, id.count <= 64,
                  id.unicodeScalars.allSatisfy({ $0.isASCII && (CharacterSet.alphanumerics.contains($0) || $0 == "-" || $0 == "_" || $0 == ".") }) else {
                return .error(400, code: "bad_request", message: "the body needs \"id\": a token id (the token_id of an auth event, base64url)")
            }
            do throws(AuthStoreError) {
                let added = try auth.revoke(id: id, client: request.remoteAddress)
                return .json(200, ["revoked": true, "id": .string(id), "already": .bool(!added)])
            } catch {
                return .error(500, code: "internal", message: error.description)
            }
        }
    }

    /// Watson Assistant v1 `/message`: the same request and response bodies, so a Watson client only changes
    /// its base URL. The context travels with the client, as in Watson.
    private func message(_ request: HTTPRequest, workspaceID: String) -> HTTPResponse {
        let workspace = turns.assistant.workspace
        guard request.query["version"].map({ !$0.isEmpty }) == true else {
            return .error(400, code: "bad_request", message: "the version query parameter is required (e.g. ?version=2021-06-14)")
        }
        guard workspaceID == "default" || workspaceID == workspace.name || workspaceID == workspace.raw["workspace_id"]?.stringValue else {
            return .error(404, code: "not_found", message: "no workspace \"\(workspaceID)\": this appliance serves \"\(workspace.name)\" (or use \"default\")")
        }
        var object = JSONObject()
        if !request.body.isEmpty {
            switch Self.jsonBody(request) {
            case .failure(let e): return e.response
            case .success(let o): object = o
            }
        }
        if let input = object["input"], input.objectValue == nil, !input.isNull {
            return .error(400, code: "bad_request", message: "input must be an object like {\"text\": \"turn on the light\"}")
        }
        let textValue = object["input"]?["text"]
        if let textValue, textValue.stringValue == nil, !textValue.isNull {
            return .error(400, code: "bad_request", message: "input.text must be a string")
        }
        if let c = object["context"], c.objectValue == nil, !c.isNull {
            return .error(400, code: "bad_request", message: "context must be an object (the one the previous response returned)")
        }
        let text = textValue?.stringValue ?? ""
        let context = object["context"]?.objectValue ?? JSONObject()
        let alternates = object["alternate_intents"]?.boolValue ?? false
        if text.trimmingWhitespace().isEmpty && context["system"] == nil {
            // A new conversation without input: the welcome turn, as Watson answers it.
            let turn = turnGate.run { turns.start(context: context) }
            return .json(200, messageResponse(understanding: Understanding(text: "", intents: [], entities: []), turn: turn, alternateIntents: alternates))
        }
        let result = turnGate.run { turns.run(text: text, context: context, source: .web) }
        guard let dialog = result.dialog else { return .error(500, code: "internal", message: "the dialog did not run") }
        return .json(200, messageResponse(understanding: result.understanding, turn: dialog, alternateIntents: alternates))
    }

    private func events(_ request: HTTPRequest) -> HTTPResponse {
        guard let store else { return .error(503, code: "unavailable", message: "this server has no event store") }
        var afterID: Int64?
        if let since = request.query["since"] {
            guard let id = Int64(since), id >= 0 else { return .error(400, code: "bad_request", message: "since must be an event id (a whole number), not \"\(since)\"") }
            afterID = id
        }
        var limit = 200
        if let l = request.query["limit"] {
            guard let n = Int(l), (1...10_000).contains(n) else { return .error(400, code: "bad_request", message: "limit must be 1…10000, not \"\(l)\"") }
            limit = n
        }
        do {
            let events = afterID == nil ? try store.latestEvents(limit: limit) : try store.events(afterID: afterID, limit: limit)
            return .json(200, ["events": .array(events.map { .object($0.json) })])
        } catch {
            return .error(500, code: "internal", message: "event store: \(error)")
        }
    }

    static func pictureJSON(_ p: StoredPicture) -> JSONValue {
        [
            "id": .number(Double(p.id)), "time": .string(ApplianceEvent.iso8601(p.time)),
            "width": .number(Double(p.width)), "height": .number(Double(p.height)), "bytes": .number(Double(p.bytes)),
            "trigger": .string(p.trigger), "url": .string("/api/pictures/\(p.id)"),
        ]
    }

    private func listPictures() -> HTTPResponse {
        guard let pictures else { return .json(200, ["pictures": []]) }
        do {
            return .json(200, ["pictures": .array(try pictures.list(limit: 100).map(Self.pictureJSON))])
        } catch {
            return .error(500, code: "internal", message: "picture store: \(error)")
        }
    }

    private func picture(_ idText: String) -> HTTPResponse {
        guard let id = Int64(idText) else { return .error(404, code: "not_found", message: "no picture \"\(idText)\"") }
        do {
            guard let p = try pictures?.picture(id: id) else { return .error(404, code: "not_found", message: "no picture \(id) (it may have been pruned)") }
            let bytes = try [UInt8](Data(contentsOf: p.url))
            return .bytes(200, "image/jpeg", bytes).adding(header: "cache-control", value: "private, max-age=86400")
        } catch {
            return .error(404, code: "not_found", message: "picture \(id): \(error.localizedDescription)")
        }
    }

    private func devices() -> HTTPResponse {
        let set = turns.devices
        var list: [JSONValue] = []
        for name in set.outputs.keys.sorted() {
            guard let output = set.outputs[name] else { continue }
            var o: JSONObject = ["name": .string(name), "kind": "output"]
            do { o["state"] = .string(try output.read() ? "on" : "off") } catch { o["error"] = .string(error.message) }
            list.append(.object(o))
        }
        if let button = set.button {
            var o: JSONObject = ["name": .string(button.name), "kind": "input"]
            do { o["state"] = .string(try button.read() ? "on" : "off") } catch { o["error"] = .string(error.message) }
            list.append(.object(o))
        }
        if set.camera != nil { list.append(["name": .string(DeviceSet.cameraName), "kind": "camera"]) }
        return .json(200, ["devices": .array(list), "simulated": .array(set.simulated.map { .string($0) })])
    }

    /// A device command from the page's switch: the same dispatcher as the dialog's actions, so it is
    /// logged as an action and a device event.
    private func command(_ request: HTTPRequest, device: String) -> HTTPResponse {
        let names = turns.devices.names
        guard names.contains(device) else {
            return .error(404, code: "not_found", message: "no device \"\(device)\" (devices: \(names.joined(separator: ", ")))")
        }
        return Self.withJSONBody(request) { body in self.command(body, device: device) }
    }

    private func command(_ body: JSONObject, device: String) -> HTTPResponse {
        guard let command = body["command"]?.stringValue else {
            return .error(400, code: "bad_request", message: "the body needs \"command\": on, off, toggle or blink (camera: capture)")
        }
        let dispatcher = turns.dispatcher(turn: nil, trigger: "web")
        do {
            switch try dispatcher.run(device: device, command: command) {
            case .picture(let stored): return .json(200, Self.pictureJSON(stored))
            case .state(let on): return .json(200, ["name": .string(device), "state": .string(on ? "on" : "off")])
            }
        } catch {
            switch error {
            case .unknownCommand: return .error(400, code: "bad_request", message: error.message)
            case .noSuchDevice: return .error(404, code: "not_found", message: error.message)
            case .deviceFailed: return .error(503, code: "unavailable", message: error.message)
            }
        }
    }

    private func say(_ request: HTTPRequest) -> HTTPResponse {
        Self.withJSONBody(request) { body in self.say(body) }
    }

    private func say(_ body: JSONObject) -> HTTPResponse {
        guard let text = body["text"]?.stringValue, !text.trimmingWhitespace().isEmpty else {
            return .error(400, code: "bad_request", message: "the body needs \"text\": what to say")
        }
        guard let speak else { return .error(503, code: "unavailable", message: "this appliance has no speaker") }
        guard speak(text) else { return .error(503, code: "unavailable", message: "speaking failed (see the event log)") }
        turns.recorder.record(.reply, text, ["source": "web", "say": true])
        return .json(202, ["spoken": true])
    }
}

extension CompanionAPI {
    /// The longest announcement, in characters (about half a minute of speech).
    static let maximumAnnouncementCharacters = RoomLink.maximumAnnouncementCharacters

    private func announce(_ request: HTTPRequest) -> HTTPResponse {
        Self.withJSONBody(request) { body in self.announce(body) }
    }

    /// `POST /api/announce {"text"}`: the text spoken on the appliance's speaker and mixed into every room that has
    /// an audio socket open, for every member. 409 when nobody would hear it (no speaker, no room with sound).
    private func announce(_ body: JSONObject) -> HTTPResponse {
        guard let raw = body["text"]?.stringValue else {
            return .error(400, code: "bad_request", message: "the body needs \"text\": what to announce")
        }
        let text = raw.trimmingWhitespace(newlines: true)
        guard !text.isEmpty, text.count <= Self.maximumAnnouncementCharacters else {
            return .error(400, code: "bad_request", message: "\"text\" must be 1 to \(Self.maximumAnnouncementCharacters) characters (it has \(text.count))")
        }
        var voice: [Int16]?
        if let audio = body["audio"] {
            switch Self.announcementAudio(audio) {
            case .success(let samples): voice = samples
            case .failure(let refusal): return refusal.response
            }
        }
        switch announce(HarkAppliance.Announcement(text: text, voice: voice), source: "web") {
        case .announced(let spoken, let rooms):
            return .json(202, ["announced": true, "appliance": .bool(spoken), "rooms": .array(rooms.map { .string($0) })])
        case .unsynthesisable:
            return .error(503, code: "unavailable", message: "the announcement could not be synthesised (see the event log)")
        case .busy:
            return .error(429, code: "busy", message: "a minute of announcements is already waiting to play in the rooms")
        case .nobodyListening(let message):
            return .error(409, code: "nobody_listening", message: message)
        }
    }

    /// The shortest and longest recorded announcement `POST /api/announce` takes, in seconds (20 s of 16 kHz
    /// 16-bit audio is 853 KB of base64, inside the server's 1 MiB body).
    static let announcementAudioSeconds = 0.3...20.0

    /// `"audio"`: base64 of 16 kHz mono 16-bit little-endian PCM (a recorded announcement, as an appliance linked
    /// to this server sends what its owner said).
    static func announcementAudio(_ value: JSONValue) -> Result<[Int16], HTTPResponseError> {
        let rate = Double(PCMFormat.speech.sampleRate)
        guard let encoded = value.stringValue, let data = Data(base64Encoded: encoded) else {
            return .failure(HTTPResponseError(.error(400, code: "bad_request", message: "\"audio\" must be base64 of 16 kHz mono 16-bit little-endian PCM")))
        }
        let seconds = Double(data.count / 2) / rate
        guard data.count % 2 == 0, announcementAudioSeconds.contains(seconds) else {
            return .failure(HTTPResponseError(.error(400, code: "bad_request", message: String(
                format: "\"audio\" must hold %.1f to %.0f s of 16 kHz 16-bit samples (it has %d bytes: %.2f s)",
                announcementAudioSeconds.lowerBound, announcementAudioSeconds.upperBound, data.count, seconds))))
        }
        return .success(LittleEndianPCM.samples(data))
    }

    /// What an announcement did.
    public enum Announcement: Sendable, Equatable {
        /// Said on the appliance's speaker (`spoken`) and/or mixed into these rooms.
        case announced(spoken: Bool, rooms: [String])
        case unsynthesisable
        /// A minute of announcements already waits.
        case busy
        /// No speaker and no room with its sound open (the message says which).
        case nobodyListening(String)
    }

    /// Said before an announcement in the speaker's own voice, so that nobody takes it for someone in the room.
    static let voiceLead = "Announcement."

    /// Says `text` (checked by the caller: 1 to `maximumAnnouncementCharacters`) on the appliance's speaker and into
    /// every room with its sound open, and logs it as a `reply` with `source`: `POST /api/announce` and the
    /// dialog's "announce …" (the `room` action's `announce` command) both come here.
    public func announce(text: String, source: String) -> Announcement {
        announce(HarkAppliance.Announcement(text: text), source: source)
    }

    /// An announcement, read out by the synthesiser, or with `voice` (the dialog's, when it was said) played
    /// after a short spoken lead ("Announcement.").
    public func announce(_ announcement: HarkAppliance.Announcement, source: String) -> Announcement {
        let text = announcement.text
        let voice = announcement.voice.map { (synthesize?(Self.voiceLead) ?? []) + $0 }
        var rooms: Set<String> = []
        if let roomAudio {
            var samples = voice
            if samples == nil, let synthesize {
                guard let said = synthesize(text) else { return .unsynthesisable }
                samples = said
            }
            if let samples {
                guard let heard = roomAudio.announce(samples) else { return .busy }
                rooms = heard
            }
        }
        let spoken = if let voice, let play { play(voice) } else { speak?(text) ?? false }
        guard spoken || !rooms.isEmpty else {
            return .nobodyListening(speak == nil
                ? "nobody would hear it: this appliance has no speaker and no room has its sound open"
                : "the appliance could not speak it (see the event log) and no room has its sound open")
        }
        turns.recorder.record(.reply, text, ["source": .string(source), "announce": true, "say": .bool(spoken), "rooms": .number(Double(rooms.count)),
                                             "voice": .bool(voice != nil)])
        return .announced(spoken: spoken, rooms: rooms.sorted())
    }
}

/// A ready HTTP error response carried through `Result`.
struct HTTPResponseError: Error {
    var response: HTTPResponse
    init(_ response: HTTPResponse) { self.response = response }
}
