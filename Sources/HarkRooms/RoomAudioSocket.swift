import Foundation
import HarkCore
import HarkHTTP
import Synchronization

/// One member's `WS /rooms/{id}/audio`: binary `RoomAudioFrame`s in (into the member's jitter buffer), the
/// member's mix-minus out (queued by the mixing thread). A frame that does not parse is answered with a text
/// message `{"error": {"code": "bad_frame", "reason", "message"}}` (at most `maximumErrorsPerSecond`) and
/// dropped; the socket, and the room, carry on.
final class RoomAudioSocket: WebSocketHandler {
    static let maximumErrorsPerSecond = 10

    let audio: RoomAudio
    let room: String
    let member: String
    private let channel = Mutex<AudioChannel?>(nil)
    private let errors = Mutex<(second: Int, count: Int)>((0, 0))

    init(audio: RoomAudio, room: String, member: String) {
        self.audio = audio
        self.room = room
        self.member = member
    }

    func opened(_ connection: WebSocketConnection) {
        let attached = audio.attach(room: room, member: member, connection: connection)
        channel.withLock { $0 = attached }
    }

    func received(binary: [UInt8]) {
        guard let channel = channel.withLock({ $0 }) else { return }
        do throws(RoomAudioFrameError) {
            let frame = try RoomAudioFrame.parse(binary)
            channel.inbox.withLock { $0.jitter.put(sequence: frame.sequence, payload: frame.payload) }
            audio.count { $0.framesReceived += 1 }
        } catch {
            if let connection = channel.connection { refuse(error, on: connection) }
        }
    }

    func received(text: String) {
        guard let channel = channel.withLock({ $0 }) else { return }
        guard let connection = channel.connection else { return }
        refuse(RoomAudioFrameError(.text, "this socket takes binary audio frames (docs/rooms.md), not text"), on: connection)
    }

    func closed() {
        guard let channel = channel.withLock({ c -> AudioChannel? in
            defer { c = nil }
            return c
        }) else { return }
        audio.detach(channel)
    }

    private func refuse(_ error: RoomAudioFrameError, on connection: WebSocketConnection) {
        audio.count { $0.framesRefused += 1 }
        let second = Int(Date().timeIntervalSince1970)
        let allowed = errors.withLock { e -> Bool in
            if e.second != second { e = (second, 0) }
            e.count += 1
            return e.count <= Self.maximumErrorsPerSecond
        }
        guard allowed else { return }
        let body: JSONValue = ["error": ["code": "bad_frame", "reason": .string(error.reason.rawValue), "message": .string(error.message)]]
        connection.send(text: body.serialized())
    }
}
