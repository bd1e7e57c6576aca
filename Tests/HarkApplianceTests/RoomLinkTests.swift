import HarkAppliance
import HarkCore
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
        link.installAnnouncer { text in
            heard.withLock { $0.append(text) }
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

    private func caughtError(_ body: () throws -> Void) -> String? {
        do { try body() } catch { return "\(error)" }
        return nil
    }
}
