import Foundation
import HarkAppliance
import HarkAudio
import HarkCore
import HarkHTTP
import HarkSpeech

/// `WS /api/listen`: push-to-talk from the browser. Binary messages are 16 kHz mono s16le PCM as the
/// microphone gives it; the partial transcript comes back about twice a second while the button is held;
/// `{"type": "end", "context": {…}}` on release runs the turn through the same pipeline as the appliance's
/// own microphone and answers with the transcript, the dialog reply (Watson's response, with the context
/// for the next turn) and the reply's audio as a WAV file.
///
/// One browser talks at a time, so one socket must not hold the recogniser for long: a turn takes at most
/// `ListenLimits.maximumAudio` of audio (more closes the socket with 1009), a socket that sends nothing for
/// `idleTimeout` or stays open `maximumSession` is closed with 1008 and the recogniser lent to
/// the next browser. Audio sent faster than it can be recognised is held back by the server's flow control.
final class ListenSocket: WebSocketHandler, @unchecked Sendable {
    // @unchecked: the server calls a handler's methods one at a time, in order, on the connection's own queue
    // (WebSocketHandler's contract), so the mutable state below is never touched concurrently.
    let listening: WebListening
    let turns: TurnRunner
    private var connection: WebSocketConnection?
    private var recognizer: SpeechRecognizer?
    /// Follows the press's audio beside the recogniser to tell whether it held a voice at all (nil: not judged).
    private var voice: Endpointer?
    private var samplesSincePartial = 0
    private var lastPartial = ""
    private var pendingByte: UInt8?
    private var samplesThisTurn = 0
    private static let partialEvery = 8_000  // 0.5 s of audio
    let limits: ListenLimits
    private let watchdog = ListenWatchdog()

    /// Says the reply's speech into a room as well (`/api/listen?room=ID`), for everyone in it.
    let roomReply: (@Sendable (PCMBuffer) -> Void)?

    init(listening: WebListening, turns: TurnRunner, limits: ListenLimits = ListenLimits(), roomReply: (@Sendable (PCMBuffer) -> Void)? = nil) {
        self.roomReply = roomReply
        self.listening = listening
        self.turns = turns
        self.limits = limits
    }

    private func send(_ object: JSONObject) {
        _ = connection?.send(text: JSONValue.object(object).serialized())
    }

    private func fail(_ message: String, close: Bool = false) {
        send(["type": "error", "error": ["code": "unavailable", "message": .string(message)]])
        if close { connection?.close(code: 1011, reason: String(message.prefix(100))) }
    }

    func opened(_ connection: WebSocketConnection) {
        self.connection = connection
        watchdog.start(connection: connection, limits: limits)
        guard let recognizer = listening.borrow() else {
            fail("another browser is talking to the appliance; try again in a moment", close: true)
            return
        }
        self.recognizer = recognizer
        voice = try? Endpointer(configuration: listening.endpointing)
        do { try recognizer.startUtterance() } catch { fail("recogniser: \(error)", close: true) }
        send(["type": "listening"])
    }

    func received(binary: [UInt8]) {
        watchdog.touch()
        guard let recognizer else { return }
        // s16le: an odd byte count carries its last byte into the next message.
        var bytes = binary
        if let carried = pendingByte { bytes.insert(carried, at: 0); pendingByte = nil }
        if bytes.count % 2 == 1 { pendingByte = bytes.removeLast() }
        let maximumSamples = Int(limits.maximumAudio.timeInterval * Double(PCMFormat.speech.sampleRate))
        guard samplesThisTurn + bytes.count / 2 <= maximumSamples else {
            let seconds = Int(limits.maximumAudio.timeInterval)
            fail("at most \(seconds) s of audio per turn: release the button sooner")
            connection?.close(code: 1009, reason: "at most \(seconds) s of audio per turn")
            return
        }
        samplesThisTurn += bytes.count / 2
        let samples = LittleEndianPCM.samples(bytes)
        do {
            let block = PCMBuffer(format: .speech, samples: samples)
            try recognizer.process(block)
            if (try? voice?.process(block)) == nil { voice = nil }
            samplesSincePartial += samples.count
            if samplesSincePartial >= Self.partialEvery {
                samplesSincePartial = 0
                let partial = try recognizer.partialText()
                if partial != lastPartial {
                    lastPartial = partial
                    send(["type": "partial", "text": .string(partial)])
                }
            }
        } catch {
            fail("recogniser: \(error)")
        }
    }

    func received(text: String) {
        watchdog.touch()
        guard let message = try? JSONValue.parse(text).objectValue, let type = message["type"]?.stringValue else {
            fail("expected a JSON message like {\"type\": \"end\"}")
            return
        }
        guard type == "end" else {
            fail("unknown message type \"\(type)\" (send binary audio, then {\"type\": \"end\"})")
            return
        }
        finish(context: message["context"]?.objectValue ?? JSONObject())
    }

    private func finish(context: JSONObject) {
        guard let recognizer else { return }
        let voice = self.voice
        self.recognizer = nil
        self.voice = nil
        defer { listening.release() }
        let transcript: Transcript
        do { transcript = try recognizer.finishUtterance() } catch {
            fail("recogniser: \(error)")
            return
        }
        // A press that held only a knock, a click or a chime (what the appliance's endpointer dismisses) and no voice.
        // One in which the endpointer found no utterance at all (too quiet, or too short for its noise floor) is
        // decoded as before.
        if voice?.heardOnlyNoiseAtEndOfInput() == true {
            nothingHeard(context: context)
            return
        }
        let command = turns.speechUnderstanding.understand(transcript)
        // The words that answer: the second reading's when it decided (docs/speech.md, "A second reading decides").
        let confidence = command.decidedByReading ? command.acousticConfidence : transcript.acousticConfidence
        send([
            "type": "transcript", "text": .string(command.text),
            "acoustic_confidence": .number((confidence * 1000).rounded() / 1000), "accepted": .bool(command.accepted),
        ])
        let result = turns.run(spoken: command, context: context, source: .web)
        let response = result.dialog.map { messageResponse(understanding: result.understanding, turn: $0, alternateIntents: false) }
            ?? Self.plainResponse(result.reply, context: context)
        sendReply(result.reply, accepted: result.accepted, response: response, intoRoom: true)
    }

    /// The answer to a press without a voice: no command is decoded into it, the event log says why, and the page
    /// gets an empty transcript and the apology, as for a press in which nothing was recognised; the room, if the
    /// press came from one, hears nothing.
    private func nothingHeard(context: JSONObject) {
        turns.recorder.record(.state, "Nothing heard", ["reason": "noise without a voice", "source": .string(TurnSource.web.rawValue)])
        send(["type": "transcript", "text": "", "acoustic_confidence": 0, "accepted": false, "reason": "noise without a voice"])
        sendReply(TurnRunner.apology, accepted: false, response: Self.plainResponse(TurnRunner.apology, context: context), intoRoom: false)
    }

    /// A turn's Watson response without a dialog turn (not understood, nothing heard): the reply, and the page's context
    /// handed back unchanged, so the conversation does not move.
    private static func plainResponse(_ reply: String, context: JSONObject) -> JSONValue {
        ["output": ["text": [.string(reply)]], "context": .object(context)]
    }

    /// The `reply` message, then its speech as one WAV; asked from a room (and `intoRoom`), the room hears it too.
    private func sendReply(_ reply: String, accepted: Bool, response: JSONValue, intoRoom: Bool) {
        send(["type": "reply", "text": .string(reply), "accepted": .bool(accepted), "response": response])
        do {
            // Synthesised once: the asker's WAV and, asked from a room, what the room hears.
            let speech = try listening.replySpeech(reply)
            _ = connection?.send(binary: WAV.encode(speech))
            if intoRoom, !reply.isEmpty { roomReply?(speech) }
        } catch {
            fail("speaking: \(error)")
        }
    }

    func closed() {
        watchdog.stop()
        if recognizer != nil {
            _ = try? recognizer?.finishUtterance()
            recognizer = nil
            listening.release()
        }
        connection = nil
    }
}
