import Foundation
import HarkAppliance
import HarkAudio
import HarkCore
import HarkHTTP
import HarkRooms
import HarkServer
import HarkSpeech

/// Starts the companion server for `hark serve` and `hark run`: auth under the data directory, the API on
/// the shared turn runner, the page from `web/`, HTTPS with a kept self-signed certificate when it listens on
/// the LAN.
enum ServerSetup {
    struct Started {
        var server: HTTPServer
        var url: String
        var pairingCode: String?
        var auth: AuthService
        /// The rooms' live audio, for the appliance to join as a member (`ApplianceMember`).
        var roomAudio: RoomAudio?
        /// The wake phrase listened for in the rooms' members' streams; nil when off (`rooms.wake`) or impossible.
        var memberWake: MemberWake?

        /// Stops the server and the rooms' wake-phrase worker.
        func stop() {
            server.stop()
            memberWake?.stop()
        }
    }

    static func start(
        configuration: ApplianceConfiguration, dataDirectory: URL, turns: TurnRunner, pictures: PictureStore?,
        recognizer: SpeechRecognizer?, synthesizer: SpeechSynthesizer, speak: (@Sendable (String) -> Bool)?,
        play: (@Sendable ([Int16]) -> Bool)? = nil, speechModel: SpeechModel, host: String? = nil, port: Int? = nil, roomIdleClose: Duration = Rooms.defaultIdleClose
    ) throws -> Started {
        let auth: AuthService
        do {
            let recorder = turns.recorder
            auth = try AuthService(directory: dataDirectory.appendingPathComponent("auth"), tokenLifetime: AuthService.defaultTokenLifetime,
                                   audit: { audit in recorder.record(.auth, audit.message, Self.eventData(audit)) })
        } catch {
            throw CommandFailure(message: "\(error)", exitCode: 73)
        }
        let listening = recognizer.map { WebListening(recognizer: $0, synthesizer: synthesizer, endpointing: configuration.endpointing) }
        let openAPI = SpeechCLI.repositoryFile("docs/openapi.json").flatMap { try? [UInt8](Data(contentsOf: $0)) }
        let rooms: Rooms
        do {
            rooms = try Rooms(database: dataDirectory.appendingPathComponent("rooms.sqlite3"), idleClose: roomIdleClose,
                              applianceName: configuration.roomName ?? hostnames().first ?? "Hark")
        } catch {
            throw CommandFailure(message: "server: \(error.message)", exitCode: 73)
        }
        let api = CompanionAPI(turns: turns, auth: auth, pictures: pictures, listening: listening, speak: speak, openAPI: openAPI,
                               hosts: .local(extra: configuration.serverHostNames), rooms: rooms,
                               synthesize: { text in try? synthesizer.synthesize(text).converted(to: .speech).samples }, play: play)
        let web = SpeechCLI.repositoryFile("web/index.html").map { StaticFiles(directory: $0.deletingLastPathComponent()) }
        if web == nil { printError("hark: warning: the web page (web/index.html) was not found next to the working directory or the binary: only the API is served") }

        let lan = configuration.serverLAN
        let bindHost = host ?? (lan ? "0.0.0.0" : configuration.serverHost)
        var tls: ServerConfiguration.TLS?
        if lan || configuration.certificate != nil {
            if let certificate = configuration.certificate, let key = configuration.certificateKey {
                tls = ServerConfiguration.TLS(certificate: configuration.resolve(certificate), privateKey: configuration.resolve(key))
            } else {
                do {
                    let pair = try SelfSignedCertificate.ensure(directory: dataDirectory.appendingPathComponent("tls"), hostnames: hostnames())
                    tls = ServerConfiguration.TLS(certificate: pair.certificate, privateKey: pair.key)
                } catch {
                    throw CommandFailure(message: "server: making a self-signed certificate: \(error)", exitCode: 73)
                }
            }
        }
        let server: HTTPServer
        do {
            server = try HTTPServer(
                configuration: ServerConfiguration(host: bindHost, port: port ?? configuration.serverPort, tls: tls,
                                                   maxConnectionsPerAddress: configuration.serverConnectionsPerClient),
                router: api.router(staticFiles: web))
        } catch {
            throw CommandFailure(message: "server: \(error)", exitCode: 69)
        }
        server.start()
        let memberWake = configuration.roomWake ? startMemberWake(api, configuration: configuration, model: speechModel) : nil
        // What `hark link` on another appliance pins: printed so the two can be compared.
        if let tls, let hash = Fingerprint.sha256(ofCertificateFile: tls.certificate) {
            printError("hark: HTTPS certificate SHA-256 \(Fingerprint.display(hash))")
        }
        let shownHost = bindHost == "0.0.0.0" ? (hostnames().first ?? "localhost") : bindHost
        let url = "\(tls == nil ? "http" : "https")://\(shownHost):\(server.port)/"
        let code = try? auth.issuePairingCode(lifetime: AuthService.defaultPairingCodeLifetime)
        // The dialog's "announce …" goes out the way `POST /api/announce` does (an appliance linked to another's
        // rooms replaces this with that server's, `RunCommand.joinRemoteRooms`).
        turns.roomLink.installAnnouncer(announcer(api))
        return Started(server: server, url: url, pairingCode: code, auth: auth, roomAudio: api.roomAudio, memberWake: memberWake)
    }

    /// The dialog's "announce …" (the `room` action's `announce` command) through the server's announcements.
    private static func announcer(_ api: CompanionAPI) -> @Sendable (Announcement) -> RoomOutcome {
        { announcement in
            switch api.announce(announcement, source: "dialog") {
            case .announced(_, let rooms):
                return RoomOutcome(.announced, message: rooms.isEmpty ? "announced on this appliance" : "announced here and in \(rooms.count) room(s)")
            case .nobodyListening(let message): return RoomOutcome(.nobodyListening, message: message)
            case .busy: return RoomOutcome(.failed, message: "a minute of announcements is already waiting")
            case .unsynthesisable: return RoomOutcome(.failed, message: "the announcement could not be synthesised")
            }
        }
    }

    /// The wake phrase in the rooms' members' streams (`rooms.wake`), with the microphone's wake settings
    /// (`wake.settings`, else Models/wake.json) and its endpointing limits; reported and nil when it cannot run
    /// (no recogniser, no wake model), which leaves the rest of the server running.
    static func startMemberWake(_ api: CompanionAPI, configuration c: ApplianceConfiguration, model: SpeechModel) -> MemberWake? {
        let command = MemberWake.Listening(endpointer: c.endpointing, timeout: c.listenTimeout, earcon: c.earcon)
        do {
            return try api.listenForWakePhraseInRooms(command: command) {
                try SpeechCLI.wakeSpotter(settingsPath: c.wakeSettings.map { c.resolve($0) }, model: model)
            }
        } catch {
            printError("hark: the wake phrase in rooms is off (rooms.wake): \(error)")
            api.turns.recorder.record(.error, "rooms.wake: off: \(error)", ["source": "rooms"])
            return nil
        }
    }

    /// An `auth` event's data: outcome, method, client, and subject and token id when known.
    static func eventData(_ audit: AuthAudit) -> JSONObject {
        var data = JSONObject([("outcome", .string(audit.outcome.rawValue)), ("method", .string(audit.method)), ("client", .string(audit.client))])
        if let subject = audit.subject { data["subject"] = .string(subject) }
        if let id = audit.tokenID { data["token_id"] = .string(id) }
        return data
    }

    /// This machine's names for the certificate: its host name, `localhost`, and loopback.
    static func hostnames() -> [String] {
        var names = [ProcessInfo.processInfo.hostName, "localhost", "127.0.0.1"]
        names.removeAll { $0.isEmpty }
        var unique: [String] = []
        for n in names where !unique.contains(n) { unique.append(n) }
        return unique
    }
}
