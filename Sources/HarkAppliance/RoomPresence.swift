import Foundation
import HarkAudio
import HarkCore
import HarkSpeech
import Synchronization

/// The appliance as a member of a drop-in room, seen from the voice loop and the dialog: the rooms themselves
/// live in `HarkRooms` (which depends on this module), so the loop and `ActionDispatcher` reach them through
/// this protocol, installed in the turn runner's `RoomLink` once the server's rooms exist.
public protocol RoomPresence: AnyObject, Sendable {
    /// The room the appliance is in now (`id`, `name`), nil when none.
    var currentRoom: (id: String, name: String)? { get }
    /// Joins the open room whose display name matches `name` (the room entity's value), or else `said` (the
    /// words that named it), or else one named within `text` (the whole request), leaving the room it was in.
    /// Never throws: what happened is the outcome.
    func join(named name: String, said: String?, text: String?) -> RoomOutcome
    /// Leaves the room it is in.
    func leave() -> RoomOutcome
    /// One block of the microphone (16 kHz mono) while in a room: goes (echo cancelled) to the room, and what
    /// the room mixed for the appliance since the last call comes back to be played, 16 kHz mono. May wait a
    /// little when the microphone runs ahead of the room's clock (a file played as a microphone).
    func exchange(microphone: PCMBuffer) -> RoomExchange
}

/// What one microphone block brought back from the room.
public struct RoomExchange: Sendable {
    /// The block as the room got it: with the echo of what the speaker played taken out. The voice loop listens
    /// to this one, so the room's voices coming out of the speaker are not heard as commands.
    public var microphone: PCMBuffer
    /// What to play: the room's mix for the appliance since the last block (16 kHz mono).
    public var mix: PCMBuffer

    public init(microphone: PCMBuffer, mix: PCMBuffer) {
        self.microphone = microphone
        self.mix = mix
    }
}

/// What a join or leave did, as the dialog's `result_variable` receives it:
/// `{"status": "joined"|"left"|"already"|"no_room"|"not_in_room"|"unavailable"|"failed", "room", "asked", "message"}`.
public struct RoomOutcome: Sendable, Equatable {
    public enum Status: String, Sendable {
        /// Now in `room`.
        case joined
        /// Was in `room`, and left it.
        case left
        /// Already in `room`: nothing changed.
        case already
        /// No open room matches what was asked.
        case noRoom = "no_room"
        /// Asked to leave while in no room.
        case notInRoom = "not_in_room"
        /// This process has no rooms (no server).
        case unavailable
        /// The rooms refused (the message says why).
        case failed
        /// An announcement went out (`room` says where, when it is one room).
        case announced
        /// An announcement nobody would hear: no speaker and no room with its sound open.
        case nobodyListening = "nobody_listening"
        /// "Announce", with nothing to announce.
        case noText = "no_text"
    }

    public var status: Status
    /// The room's display name (and id) it is about, when there is one.
    public var room: String?
    public var roomID: String?
    /// The name that was asked for.
    public var asked: String?
    /// For an announcement: it went out in the speaker's own recorded voice, not read out by the synthesiser.
    public var voice = false
    public var message: String

    public init(_ status: Status, room: String? = nil, roomID: String? = nil, asked: String? = nil, message: String) {
        self.status = status
        self.room = room
        self.roomID = roomID
        self.asked = asked
        self.message = message
    }

    public var json: JSONValue {
        var o = JSONObject([("status", .string(status.rawValue))])
        if let room { o["room"] = .string(room) }
        if let roomID { o["room_id"] = .string(roomID) }
        if let asked { o["asked"] = .string(asked) }
        if voice { o["voice"] = .bool(true) }
        o["message"] = .string(message)
        return .object(o)
    }
}

/// Where the appliance's `RoomPresence` is found: empty until the server's rooms start (and for good without a
/// server). Shared by the voice loop, the dialog's actions and the API.
public final class RoomLink: Sendable {
    /// The dialog action name that joins and leaves rooms (`{"command": "join"|"leave", "room", "text"}`) and
    /// announces (`{"command": "announce", "text"}`).
    public static let actionName = "room"
    /// The most characters an announcement may have (as `POST /api/announce`).
    public static let maximumAnnouncementCharacters = 500
    private let presence = Mutex<(any RoomPresence)?>(nil)
    private let announcer = Mutex<(@Sendable (Announcement) -> RoomOutcome)?>(nil)

    public init() {}

    public var current: (any RoomPresence)? { presence.withLock { $0 } }

    public func install(_ newPresence: any RoomPresence) {
        presence.withLock { $0 = newPresence }
    }

    /// What says an announcement on the appliances and into the rooms: the server's (`POST /api/announce`'s
    /// work), or the linked server's when the appliance is in another's rooms.
    public func installAnnouncer(_ announce: @escaping @Sendable (Announcement) -> RoomOutcome) {
        announcer.withLock { $0 = announce }
    }

    /// Runs the dialog's `room` action: `join` (with `room`, the entity, and `text`, the request), `leave`, or
    /// `announce` (with `text`). `spoken`: the turn's transcript when it was said, whose recording an announcement
    /// plays (`Announcement.voice(of:in:)`) instead of having the synthesiser read the recognised words.
    public func perform(command: String, parameters: JSONObject, spoken: Transcript? = nil) throws(DeviceCommandError) -> RoomOutcome {
        guard ["join", "leave", "announce"].contains(command) else {
            throw .unknownCommand("unknown command \"\(command)\" for room (use join, leave or announce)")
        }
        if command == "announce" {
            let text = parameters["text"]?.stringValue?.trimmingCharacters(in: .whitespacesAndNewlines.union(.punctuationCharacters)) ?? ""
            guard !text.isEmpty else { return RoomOutcome(.noText, message: "nothing to announce") }
            guard text.count <= Self.maximumAnnouncementCharacters else {
                return RoomOutcome(.failed, message: "an announcement may have at most \(Self.maximumAnnouncementCharacters) characters")
            }
            guard let announce = announcer.withLock({ $0 }) else {
                return RoomOutcome(.unavailable, message: "announcements need the web server, which is off")
            }
            // `asked` is what was announced: the dialog says it back, so a misheard announcement is heard as such.
            // Said by voice, the words after "announce" are played as they were said: the recogniser only knows
            // the workspace's sentences, and would turn "announce the plumber is here" into the nearest one.
            let voice = spoken.flatMap { Announcement.voice(of: text, in: $0) }
            var outcome = announce(Announcement(text: text, voice: voice))
            outcome.asked = text
            outcome.voice = voice != nil && outcome.status == .announced
            return outcome
        }
        guard let presence = current else {
            return RoomOutcome(.unavailable, message: "rooms need the web server, which is off")
        }
        switch command {
        case "join":
            func text(_ key: String) -> String? {
                let value = parameters[key]?.stringValue?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
                return value.isEmpty ? nil : value
            }
            return presence.join(named: text("room") ?? "", said: text("said"), text: text("text"))
        default:  // "leave", the only other command the guard lets through
            return presence.leave()
        }
    }
}

/// An announcement: the text (typed, or as recognised), and when it was said, the recording of its words.
public struct Announcement: Sendable, Equatable {
    public var text: String
    /// 16 kHz mono: the speaker's own words after "announce", to be played instead of `text` read out.
    public var voice: [Int16]?

    public init(text: String, voice: [Int16]? = nil) {
        self.text = text
        self.voice = voice
    }

    /// The shortest recording worth playing.
    static let minimumVoiceSeconds = 0.3
    /// Kept before the first word and after the last (word times are 10 ms frames; a word's edges are soft).
    static let leadSeconds = 0.08
    static let tailSeconds = 0.25
    /// The level a recording is brought up to (RMS, -20 dBFS), with at most `maximumGain`.
    static let targetRMS = 3_277.0
    static let maximumGain = 8.0

    /// The part of `spoken`'s recording that said `text`: `text` must be the transcript's last words (the
    /// dialog cuts it from the end of the sentence), from the first of them to the end of the last, brought to
    /// an even level. nil when there is no recording, the words do not match or it is too short.
    public static func voice(of text: String, in spoken: Transcript) -> [Int16]? {
        let recording = spoken.recording
        let wanted = Self.words(text)
        guard !recording.isEmpty, !wanted.isEmpty, spoken.words.count >= wanted.count else { return nil }
        let said = Array(spoken.words.suffix(wanted.count))
        guard said.map({ Self.words($0.text).joined(separator: " ") }) == wanted else { return nil }
        let rate = Double(PCMFormat.speech.sampleRate)
        let start = max(0, Int(((said[0].start - leadSeconds) * rate).rounded()))
        let end = min(recording.count, Int(((said[said.count - 1].end + tailSeconds) * rate).rounded()))
        guard Double(end - start) >= minimumVoiceSeconds * rate else { return nil }
        let clip = recording[start..<end]
        let rms = (clip.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(clip.count)).squareRoot()
        guard rms > 0 else { return nil }
        let gain = min(maximumGain, targetRMS / rms)
        return clip.map { Int16(clamping: Int((Double($0) * gain).rounded())) }
    }

    /// Lower-case words without punctuation ("It's" → "it's").
    static func words(_ text: String) -> [String] {
        text.lowercased().split(whereSeparator: { $0.isWhitespace }).map { word in
            String(word.filter { $0.isLetter || $0.isNumber || $0 == "'" })
        }.filter { !$0.isEmpty }
    }
}
