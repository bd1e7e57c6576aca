import HarkAppliance
import HarkCore
import HarkSpeech
import Synchronization
import Testing

/// The dialog's `room` action's `announce` command as `RoomLink` runs it, before any server is involved.
@Suite("Room link")
struct RoomLinkTests {
    @Test func announcementsAreCheckedThenHandedToTheAnnouncer() throws {
        let link = RoomLink()
        func announce(_ text: String) throws -> RoomOutcome {
            try link.perform(command: "announce", parameters: JSONObject([("text", .string(text))]))
        }
        #expect(try announce("dinner is ready").status == .unavailable, "no server, no announcer")
        let heard = Mutex<[String]>([])
        link.installAnnouncer { announcement in
            heard.withLock { $0.append(announcement.text) }
            #expect(announcement.voice == nil, "typed: read out")
            return RoomOutcome(.announced, message: "announced")
        }
        let outcome = try announce("  dinner is ready!  ")
        #expect(outcome.status == .announced && outcome.asked == "dinner is ready")
        #expect(outcome.json["asked"]?.stringValue == "dinner is ready")
        #expect(try announce(" ,. ").status == .noText)
        #expect(try announce(String(repeating: "a", count: RoomLink.maximumAnnouncementCharacters + 1)).status == .failed)
        #expect(heard.withLock { $0 } == ["dinner is ready"])
        // Joining still needs a presence; an unknown command is an error naming the ones there are.
        #expect(try link.perform(command: "join", parameters: JSONObject()).status == .unavailable)
        let unknown = caughtError { _ = try link.perform(command: "shout", parameters: JSONObject()) }
        #expect(unknown?.contains("use join, leave or announce") == true, "\(String(describing: unknown))")
    }

    /// Said, the announcement is the recording of its words: from just before the first to just after the last,
    /// brought to an even level; nothing when the words are not the transcript's last ones.
    @Test func aSpokenAnnouncementCarriesTheRecordingOfItsWords() throws {
        // 2 s: "announce" 0.10–0.50, "dinner" 0.60–0.90, "is" 0.90–1.00, "ready" 1.00–1.40; a quiet ramp.
        let recording = (0..<32_000).map { Int16($0 % 1_000 - 500) }
        let words = [("announce", 0.10, 0.50), ("dinner", 0.60, 0.90), ("is", 0.90, 1.00), ("ready", 1.00, 1.40)]
        var transcript = Transcript(text: "announce dinner is ready", words: words.map { Transcript.Word(text: $0.0, start: $0.1, end: $0.2) },
                                    acousticConfidence: 0.9, acousticMargin: nil, audioSeconds: 2, decodeMilliseconds: 1)
        transcript.recording = recording
        let voice = try #require(Announcement.voice(of: "Dinner is ready!", in: transcript))
        let start = Int((0.60 - 0.08) * 16_000), end = Int((1.40 + 0.25) * 16_000)
        #expect(voice.count == end - start)
        // The ramp's RMS is about 289, brought to -20 dBFS (3,277) at most 8 times: 8 times.
        #expect(voice.first == Int16(recording[start]) * 8 && voice.last == Int16(recording[end - 1]) * 8)
        #expect(Announcement.voice(of: "supper is ready", in: transcript) == nil, "not the words said")
        // One word: from "ready" on; too short a piece is nothing.
        #expect(Announcement.voice(of: "ready", in: transcript)?.count == end - Int((1.00 - 0.08) * 16_000))
        var clipped = transcript
        clipped.words[3].end = 1.0
        clipped.recording = Array(recording.prefix(Int(1.05 * 16_000)))
        #expect(Announcement.voice(of: "ready", in: clipped) == nil, "0.13 s of recording")
        var silent = transcript
        silent.recording = []
        #expect(Announcement.voice(of: "dinner is ready", in: silent) == nil, "nothing recorded")

        let link = RoomLink()
        let heard = Mutex<[Announcement]>([])
        link.installAnnouncer { announcement in
            heard.withLock { $0.append(announcement) }
            return RoomOutcome(.announced, message: "announced")
        }
        let outcome = try link.perform(command: "announce", parameters: JSONObject([("text", .string("dinner is ready"))]), spoken: transcript)
        #expect(outcome.voice && outcome.json["voice"]?.boolValue == true && outcome.asked == "dinner is ready")
        #expect(heard.withLock { $0.first?.voice } == voice)
        let typed = try link.perform(command: "announce", parameters: JSONObject([("text", .string("dinner is ready"))]))
        #expect(!typed.voice && typed.json["voice"] == nil)
    }

    private func caughtError(_ body: () throws -> Void) -> String? {
        do { try body() } catch { return "\(error)" }
        return nil
    }
}
