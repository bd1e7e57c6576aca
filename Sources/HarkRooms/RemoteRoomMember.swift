import Foundation
import HarkAppliance
import HarkAudio
import HarkCore
import HarkHTTP
import Synchronization

/// The appliance as a member of **another** appliance's rooms (`rooms.server`): the intercom between two Hark
/// appliances, each on its own machine. It goes in as a phone would — its name picked with `POST /auth` (kind
/// `appliance`), `GET /rooms`, `POST /rooms/{id}/join`, then `WS /rooms/{id}/audio` with 20 ms Opus frames
/// each way — over `HTTPClient`/`WebSocketClient`, TLS pinned to the certificate `hark link` recorded.
///
/// The loop's side is the same as for its own server's rooms (`RoomPresence`): every 100 ms microphone block is
/// echo cancelled against what the speaker played (`EchoPath`), cut into five frames, encoded and sent; and five
/// frames are taken from the jitter buffer the server's frames fill (decoded, or concealed when one is missing)
/// and handed back to be played. The microphone is the clock: five frames out, five in, so the two never drift.
/// A microphone that runs ahead of real time (a file) is held back to it.
///
/// When the server drops the socket — it restarted, the network went, the token was revoked — the member
/// reports it and tries to get back into the same room every 5 s until it does or is told to leave; when the
/// server says the member left or the room closed (4403), it stops.
public final class RemoteRoomMember: RoomPresence {
    public let link: RoomsLink
    public let name: String
    public let echoCancellation: Bool
    /// What happened (joined, lost, back, refused), for the event log; `true` for errors.
    private let report: @Sendable (String, Bool) -> Void
    private let address: ServerAddress
    private let pin: [UInt8]?
    static let reconnectInterval = 5.0
    static let requestTimeout = 10.0
    static let frameSamples = RoomAudio.blockSamples

    struct Session {
        var room: String
        var roomName: String
        var socket: WebSocketClient
        var jitter = JitterBuffer()
        var decoder: OpusDecoder
        var encoder: OpusEncoder
        var echo: EchoPath
        var sequence: UInt32 = 0
        /// Microphone samples short of a whole frame, sent with the next block.
        var pending: [Int16] = []
        /// For holding a fast microphone to real time.
        var started = Date()
        var sentSamples = 0
    }

    struct State {
        var session: Session?
        /// The room to get back into after the connection was lost (nil: none, or told to leave).
        var rejoin: (id: String, name: String)?
        /// Bumped by every join and leave, so a stale reconnect attempt does nothing.
        var generation = 0
    }

    private let state = Mutex(State())

    /// - Parameters:
    ///   - name: what the other members see (`rooms.name`, else the host name).
    ///   - report: called with what happened (and whether it is an error), from any thread.
    public init(link: RoomsLink, name: String, echoCancellation: Bool = true, report: @escaping @Sendable (String, Bool) -> Void) throws(RoomsError) {
        self.link = link
        self.name = name
        self.echoCancellation = echoCancellation
        self.report = report
        do { address = try link.address } catch { throw RoomsError(.storage, "rooms.server: \(error.message)") }
        pin = link.pin
    }

    public var currentRoom: (id: String, name: String)? {
        state.withLock { s in s.session.flatMap { $0.socket.isOpen ? ($0.room, $0.roomName) : nil } }
    }

    // MARK: Joining and leaving

    public func join(named name: String, said: String?, text: String?) -> RoomOutcome {
        do throws(ClientError) {
            let person = try personToken()
            let open = try openRooms(token: person)
            guard let room = ApplianceMember.match(name, text: text, in: open, displayName: { $0.name })
                    ?? said.flatMap({ ApplianceMember.match($0, text: nil, in: open, displayName: { $0.name }) }) else {
                let asked = [said ?? "", name].first { !$0.isEmpty }
                return RoomOutcome(.noRoom, asked: asked, message: asked.map { "there is no open room called \"\($0)\" on \(address)" } ?? "no open room was named")
            }
            return try join(room: room, token: person)
        } catch {
            return RoomOutcome(.failed, asked: name, message: error.message)
        }
    }

    /// Joins the open room called `displayName` on the other server, making it when there is none
    /// (`rooms.join` at start).
    public func joinOrCreate(displayName: String) -> RoomOutcome {
        do throws(ClientError) { return try tryJoinOrCreate(displayName: displayName) } catch {
            return RoomOutcome(.failed, asked: displayName, message: error.message)
        }
    }

    /// `joinOrCreate`, and while the other server cannot be reached (it is still starting, or the network is not
    /// up yet: both machines come back after a power cut, in any order), again every 5 s in the background until
    /// it can, unless a join or leave comes first. Returns the first attempt's outcome.
    public func joinOrCreateWhenReachable(displayName: String) -> RoomOutcome {
        let generation = state.withLock { $0.generation }
        do throws(ClientError) { return try tryJoinOrCreate(displayName: displayName) } catch {
            if error.status == nil { retryJoin(displayName: displayName, generation: generation) }
            return RoomOutcome(.failed, asked: displayName, message: error.message + (error.status == nil ? "; trying again every \(Int(Self.reconnectInterval)) s" : ""))
        }
    }

    private func retryJoin(displayName: String, generation: Int) {
        DispatchQueue.global().asyncAfter(deadline: .now() + Self.reconnectInterval) { [weak self] in
            guard let self, self.state.withLock({ $0.generation == generation && $0.session == nil }) else { return }
            do throws(ClientError) {
                let outcome = try self.tryJoinOrCreate(displayName: displayName)
                self.report("\(outcome.message) (rooms.join)", false)
            } catch {
                if error.status == nil {
                    self.retryJoin(displayName: displayName, generation: generation)
                } else {
                    self.report("rooms.join: cannot join \"\(displayName)\": \(error.message)", true)
                }
            }
        }
    }

    private func tryJoinOrCreate(displayName: String) throws(ClientError) -> RoomOutcome {
        let person = try personToken()
        let open = try openRooms(token: person)
        if let room = ApplianceMember.match(displayName, text: nil, in: open, displayName: { $0.name }) {
            return try join(room: room, token: person)
        }
        let made = try call("POST", "/rooms", token: person, json: .object(JSONObject([("display_name", .string(displayName))])), expect: 201)
        guard let id = made["id"]?.stringValue else { throw ClientError("POST /rooms on \(address): the answer has no id") }
        return try join(room: (id, displayName), token: person)
    }

    public func leave() -> RoomOutcome {
        // Only the Sendable parts leave the lock; the codecs are dropped inside it.
        let left = state.withLock { s -> (room: String, roomName: String, socket: WebSocketClient)? in
            defer {
                s.session = nil
                s.rejoin = nil
                s.generation += 1
            }
            return s.session.map { ($0.room, $0.roomName, $0.socket) }
        }
        guard let session = left else { return RoomOutcome(.notInRoom, message: "not in a room") }
        // Closing the audio socket is leaving; the explicit leave makes it so even if the close is lost.
        session.socket.close(code: 1000, reason: "leaving")
        if let person = try? personToken() {
            _ = try? call("POST", "/rooms/\(session.room)/leave", token: person, expect: 200)
        }
        return RoomOutcome(.left, room: session.roomName, roomID: session.room, message: "left \(session.roomName)")
    }

    private func join(room: (id: String, name: String), token: String) throws(ClientError) -> RoomOutcome {
        if let current = currentRoom, current.id == room.id {
            return RoomOutcome(.already, room: room.name, roomID: room.id, message: "already in \(room.name)")
        }
        if currentRoom != nil { _ = leave() }
        _ = try call("POST", "/rooms/\(room.id)/join", token: token, expect: 200)
        let generation = state.withLock { s in
            s.generation += 1
            return s.generation
        }
        let socket = try WebSocketClient.connect(
            address, path: "/rooms/\(room.id)/audio", token: token, pin: pin, timeout: Self.requestTimeout,
            received: { [weak self] message in self?.received(message, generation: generation) },
            closed: { [weak self] code, reason in self?.closed(code: code, reason: reason, generation: generation) })
        // Made inside the lock, so the codecs never leave it.
        let cancelling = echoCancellation
        let made = state.withLock { s -> Bool in
            guard let decoder = try? OpusDecoder(sampleRate: RoomAudio.sampleRate),
                  let encoder = try? OpusEncoder(sampleRate: RoomAudio.sampleRate, bitrate: RoomAudio.bitrate) else { return false }
            s.session = Session(room: room.id, roomName: room.name, socket: socket, decoder: decoder, encoder: encoder,
                                echo: EchoPath(cancelling: cancelling))
            s.rejoin = (room.id, room.name)
            return true
        }
        guard made else {
            socket.close(code: 1011, reason: "no codec")
            throw ClientError("Opus: cannot make the encoder or decoder")
        }
        return RoomOutcome(.joined, room: room.name, roomID: room.id, message: "joined \(room.name) on \(address)")
    }

    /// Announces `text` through the other server (`POST /api/announce` with the linked device's token): its
    /// speaker and every room there with its sound open, this appliance's included when it is in one. `voice`
    /// (16 kHz mono, when it was said) goes as `audio` and is played there instead of `text` read out.
    public func announce(_ text: String, voice: [Int16]? = nil) -> RoomOutcome {
        var body = JSONObject([("text", .string(text))])
        if let voice { body["audio"] = .string(Data(LittleEndianPCM.bytes(voice)).base64EncodedString()) }
        do throws(ClientError) {
            let answer = try HTTPClient.request(address, method: "POST", path: "/api/announce", token: link.token,
                                                json: .object(body), pin: pin, timeout: Self.requestTimeout)
            switch answer.status {
            case 202: return RoomOutcome(.announced, message: "announced through \(address)")
            case 409: return RoomOutcome(.nobodyListening, message: answer.errorMessage)
            default: return RoomOutcome(.failed, message: "POST /api/announce on \(address): \(answer.errorMessage) (\(answer.status))")
            }
        } catch {
            return RoomOutcome(.failed, message: error.message)
        }
    }

    // MARK: The other server's API

    /// A token for this appliance as a member (kind `appliance`), from the device token `hark link` got.
    private func personToken() throws(ClientError) -> String {
        let body = JSONValue.object(JSONObject([("name", .string(name)), ("kind", .string("appliance"))]))
        let answer = try call("POST", "/auth", token: link.token, json: body, expect: 200)
        guard let token = answer["jwt"]?.stringValue else { throw ClientError("POST /auth on \(address): the answer has no jwt") }
        return token
    }

    private func openRooms(token: String) throws(ClientError) -> [(id: String, name: String)] {
        guard case .array(let rooms) = try call("GET", "/rooms", token: token, expect: 200) else {
            throw ClientError("GET /rooms on \(address): the answer is not a list")
        }
        return rooms.compactMap { room in
            guard let id = room["id"]?.stringValue, let name = room["display_name"]?.stringValue else { return nil }
            return (id, name)
        }
    }

    private func call(_ method: String, _ path: String, token: String, json: JSONValue? = nil, expect: Int) throws(ClientError) -> JSONValue {
        let answer = try HTTPClient.request(address, method: method, path: path, token: token, json: json, pin: pin, timeout: Self.requestTimeout)
        guard answer.status == expect else {
            throw ClientError("\(method) \(path) on \(address): \(answer.errorMessage) (\(answer.status))", status: answer.status)
        }
        return try answer.json("\(method) \(path) on \(address)")
    }

    // MARK: Audio

    public func exchange(microphone: PCMBuffer) -> RoomExchange {
        let speech = PCMFormat(sampleRate: RoomAudio.sampleRate, channels: 1)
        guard microphone.format == speech else { return RoomExchange(microphone: microphone, mix: PCMBuffer(format: speech)) }
        struct Step: Sendable { var cleaned: [Int16]; var frames: [[UInt8]]; var socket: WebSocketClient; var ahead: Double }
        let step: Step? = state.withLock { s in
            guard var session = s.session else { return nil }
            defer { s.session = session }
            let cleaned = session.echo.clean(microphone)
            session.pending += cleaned
            var frames: [[UInt8]] = []
            while session.pending.count >= Self.frameSamples {
                let block = Array(session.pending.prefix(Self.frameSamples))
                session.pending.removeFirst(Self.frameSamples)
                guard let packet = try? session.encoder.encode(block) else { continue }
                let frame = RoomAudioFrame(sequence: session.sequence, timestamp: UInt32(truncatingIfNeeded: session.sequence &* 20), payload: packet)
                session.sequence &+= 1
                frames.append(frame.bytes)
            }
            session.sentSamples += frames.count * Self.frameSamples
            let ahead = Double(session.sentSamples) / Double(RoomAudio.sampleRate) - Date().timeIntervalSince(session.started)
            return Step(cleaned: cleaned, frames: frames, socket: session.socket, ahead: ahead)
        }
        guard let step else { return RoomExchange(microphone: microphone, mix: PCMBuffer(format: speech)) }
        for frame in step.frames {
            do throws(ClientError) { try step.socket.send(.binary(frame)) } catch { break }  // `closed` reports it
        }
        // Held to real time: a file read as a microphone delivers as fast as it is read.
        let limit = Double(ApplianceMember.maximumAheadSamples) / Double(RoomAudio.sampleRate)
        if step.ahead > limit { Thread.sleep(forTimeInterval: min(step.ahead - limit, ApplianceMember.maximumWait)) }
        // As many frames of the room as the microphone gave: the microphone is the clock.
        let mix: [Int16] = state.withLock { s in
            guard var session = s.session else { return [] }
            defer { s.session = session }
            var out: [Int16] = []
            guard session.jitter.started else { return out }
            for _ in 0..<step.frames.count {
                let decoded: [Int16]?
                switch session.jitter.take() {
                case .packet(let packet): decoded = try? session.decoder.decode(packet)
                case .missing(let next): decoded = try? (next.map { try session.decoder.recover(before: $0) } ?? session.decoder.conceal())
                }
                out += decoded ?? [Int16](repeating: 0, count: Self.frameSamples)
            }
            return session.echo.play(out)
        }
        return RoomExchange(microphone: PCMBuffer(format: speech, samples: step.cleaned), mix: PCMBuffer(format: speech, samples: mix))
    }

    private func received(_ message: WebSocketClient.Message, generation: Int) {
        switch message {
        case .binary(let bytes):
            guard let frame = try? RoomAudioFrame.parse(bytes) else { return }
            state.withLock { s in
                guard s.generation == generation, s.session != nil else { return }
                s.session!.jitter.put(sequence: frame.sequence, payload: frame.payload)
            }
        case .text(let text):
            report("room audio on \(address): \(text)", true)
        }
    }

    private func closed(code: Int, reason: String, generation: Int) {
        let lost: (id: String, name: String)? = state.withLock { s in
            guard s.generation == generation else { return nil }
            s.session = nil
            // 4403: the server says this member left or the room closed; 1000: this side closed it.
            if code == 4403 || code == 1000 { s.rejoin = nil }
            return s.rejoin
        }
        guard let lost else {
            if code == 4403 { report("left the room on \(address): \(reason)", false) }
            return
        }
        report("lost the room \(lost.name) on \(address) (\(code) \(reason)); trying again every \(Int(Self.reconnectInterval)) s", true)
        scheduleRejoin(lost, generation: generation)
    }

    private func scheduleRejoin(_ room: (id: String, name: String), generation: Int) {
        DispatchQueue.global().asyncAfter(deadline: .now() + Self.reconnectInterval) { [weak self] in
            guard let self, self.state.withLock({ $0.generation == generation && $0.rejoin?.id == room.id }) else { return }
            do throws(ClientError) {
                let outcome = try self.join(room: room, token: try self.personToken())
                self.report("back in \(outcome.room ?? room.name) on \(self.address)", false)
            } catch {
                // Gone for good (the room closed, this appliance was unlinked): stop; otherwise keep trying.
                if let status = error.status, [401, 403, 404, 410].contains(status) {
                    self.state.withLock { $0.rejoin = nil }
                    self.report("cannot get back into \(room.name) on \(self.address): \(error.message)", true)
                } else {
                    self.scheduleRejoin(room, generation: self.state.withLock { $0.generation })
                }
            }
        }
    }
}
