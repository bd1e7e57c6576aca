import Foundation
import Synchronization
import HarkCore
import HarkSpeech

/// One turn of the conversation, wherever it comes from (the microphone, the console, the web): the
/// transcript, the matcher's reading, the dialog with the devices' real states in its context and its
/// actions run on them, the reply — every step an event, the turn a row in the store. Spoken commands
/// that fail either confidence get "Sorry, I didn't catch that." and change nothing.
///
/// Thread-safe: the loop and the server's handlers run turns concurrently; each passes its own context.
public final class TurnRunner: Sendable {
    public let assistant: Assistant
    public let devices: DeviceSet
    public let recorder: EventRecorder
    /// The appliance's membership of a drop-in room (empty until the server's rooms start): the dialog's
    /// `room` action and the voice loop use it.
    public let roomLink = RoomLink()
    let pictures: PictureStore?
    let thresholds: (acoustic: Double, intent: Double)
    /// Seeds each turn's own generator. Only the draw of a seed is serialised: a turn's matcher, dialog and
    /// event log run outside it, so concurrent web turns do not queue behind one another (device commands are
    /// still one at a time: `DeviceSet.commandsInOrder`). A seeded runner stays reproducible turn by turn.
    private let seeds: Mutex<SplitMix64>

    /// What a turn produced.
    public struct Result: Sendable {
        public var turn: Int64?
        public var understanding: Understanding
        /// The dialog's turn; nil when a spoken command was rejected (the dialog did not run).
        public var dialog: DialogTurn?
        /// The reply as spoken: the dialog's text lines joined, or the apology.
        public var reply: String
        public var accepted: Bool
        /// The context for the next turn (unchanged when the command was rejected).
        public var context: JSONObject
        /// The dialog waits for an answer (Watson's `branch_exited` is not true).
        public var waitingForAnswer: Bool
    }

    public static let apology = "Sorry, I didn't catch that."

    public init(
        assistant: Assistant, devices: DeviceSet, recorder: EventRecorder, pictures: PictureStore?,
        acousticThreshold: Double, intentThreshold: Double, seed: UInt64? = nil
    ) {
        self.assistant = assistant
        self.devices = devices
        self.recorder = recorder
        self.pictures = pictures
        thresholds = (acousticThreshold, intentThreshold)
        speechUnderstanding = SpeechUnderstanding(matcher: assistant.matcher, acousticThreshold: acousticThreshold, intentThreshold: intentThreshold)
        seeds = Mutex(SplitMix64(seed: seed ?? UInt64.random(in: 0...UInt64.max)))
    }

    /// The first turn (`conversation_start` / `welcome`), with the devices' states in the context.
    public func start(context: JSONObject = JSONObject()) -> DialogTurn {
        let published = publishedStates(into: context)
        return withRandom { assistant.dialog.start(context: published, now: Date(), random: &$0) }
    }

    /// A typed (or web) turn.
    public func run(text: String, context: JSONObject, source: TurnSource) -> Result {
        run(text: text, spoken: nil, context: context, source: source)
    }

    /// A spoken turn: `command` comes from `SpeechUnderstanding` with this runner's thresholds.
    public func run(spoken command: SpokenCommand, context: JSONObject, source: TurnSource) -> Result {
        run(text: command.text, spoken: command, context: context, source: source)
    }

    /// Understanding for speech with the configured thresholds (made once: it reads the workspace's free-text intents).
    public let speechUnderstanding: SpeechUnderstanding

    private func run(text: String, spoken: SpokenCommand?, context: JSONObject, source: TurnSource) -> Result {
        let turnID = recorder.beginTurn(source: source)
        if let spoken {
            let t = spoken.transcript
            var data: JSONObject = [
                "transcript": .string(t.text), "acoustic_confidence": .number(rounded(spoken.acousticConfidence)),
                "audio_seconds": .number(rounded(t.audioSeconds)), "decode_ms": .number(rounded(t.decodeMilliseconds, 1)),
                "accepted": .bool(spoken.accepted), "source": .string(source.rawValue), "noisy_decoding": .bool(t.noisyDecoding),
                "moderate_decoding": .bool(t.moderateDecoding),
            ]
            if let snr = t.signalToNoise { data["snr_db"] = .number(rounded(snr, 1)) }
            if let margin = t.englishMargin { data["english_margin"] = .number(rounded(margin)) }
            if t.otherSpeech { data["other_speech"] = .bool(true) }
            if let reading = t.secondReading { data["second_reading"] = .string(reading) }
            if spoken.decidedByReading { data["decided_by_reading"] = .bool(true) }
            if !spoken.valuesUnread.isEmpty { data["values_unread"] = .array(spoken.valuesUnread.map { .string($0) }) }
            if let margin = spoken.valuesMargin { data["values_margin"] = .number(rounded(margin)) }
            data["decode_cpu_ms"] = .number(rounded(t.decodeCPUMilliseconds, 1))
            if let delay = t.resultDelayMilliseconds { data["result_delay_ms"] = .number(rounded(delay, 1)) }
            if let heard = t.utteranceSeconds { data["utterance_seconds"] = .number(rounded(heard)) }
            recorder.record(.transcript, t.text.isEmpty ? "(nothing recognised)" : t.text, data, turn: turnID)
            if !spoken.accepted {
                // Unsure is better than wrong: nothing runs, the conversation does not move.
                let why = spoken.rejectionReason(acousticThreshold: thresholds.acoustic, intentThreshold: thresholds.intent)
                recorder.record(.intent, "not understood (\(why))", ["accepted": false, "reason": .string(why), "intents": intentsJSON(spoken.understanding)], turn: turnID)
                finish(turnID, reply: Self.apology, accepted: false, intent: nil, heard: t.text, acoustic: spoken.acousticConfidence)
                return Result(turn: turnID, understanding: spoken.understanding, dialog: nil, reply: Self.apology, accepted: false,
                              context: context, waitingForAnswer: false)
            }
        } else {
            recorder.record(.transcript, text, ["transcript": .string(text), "source": .string(source.rawValue)], turn: turnID)
        }
        // The same matcher reading as typed text, reported before the dialog acts on it.
        let understood = spoken?.understanding ?? assistant.matcher.understand(text)
        let top = understood.intents.first
        recorder.record(.intent, top.map { "#\($0.intent) \(format($0.confidence))" } ?? "no intent", [
            "accepted": true, "intents": intentsJSON(understood),
            "entities": .array(understood.entities.map(\.json)),
        ], turn: turnID)
        let dispatcher = dispatcher(turn: turnID, trigger: source.rawValue, spoken: spoken?.transcript)
        let published = publishedStates(into: context)
        let dialog = withRandom { assistant.dialog.respond(to: understood, context: published, now: Date(), random: &$0, performer: dispatcher) }
        recorder.record(.state, "Dialog: \(dialog.nodesVisited.joined(separator: " → "))",
                        ["nodes_visited": .array(dialog.nodesVisited.map { .string($0) })], turn: turnID)
        for message in dialog.logMessages where ["error", "err"].contains(message["level"]?.stringValue ?? "") {
            recorder.record(.error, message["msg"]?.stringValue ?? "dialog error", ["source": "dialog"], turn: turnID)
        }
        let reply = dialog.text.filter { !$0.isEmpty }.joined(separator: " ")
        finish(turnID, reply: reply, accepted: true, intent: top, heard: text, acoustic: spoken?.acousticConfidence)
        return Result(turn: turnID, understanding: understood, dialog: dialog, reply: reply, accepted: true, context: dialog.context,
                      waitingForAnswer: dialog.context["system"]?["branch_exited"]?.boolValue != true)
    }

    /// Runs device commands on this runner's devices, logging them through its recorder: the dialog's
    /// actions, and the web page's switch and camera button.
    public func dispatcher(turn: Int64?, trigger: String, spoken: Transcript? = nil) -> ActionDispatcher {
        let recorder = recorder
        return ActionDispatcher(
            devices: devices, pictures: pictures, turn: turn, trigger: trigger, rooms: roomLink, spoken: spoken,
            report: { recorder.record($0) }, announce: { recorder.announce($0) })
    }

    private func finish(_ turnID: Int64?, reply: String, accepted: Bool, intent: IntentScore?, heard: String, acoustic: Double?) {
        recorder.record(.reply, reply, ["accepted": .bool(accepted)], turn: turnID)
        recorder.finishTurn(turnID, TurnOutcome(
            transcript: heard, acousticConfidence: acoustic, intent: intent?.intent,
            confidence: intent?.confidence, reply: reply, accepted: accepted))
    }

    /// The dialog sees each output's real state (read from its line) in its context variable before every turn.
    public func publishedStates(into context: JSONObject) -> JSONObject {
        var context = context
        let (states, failures) = devices.states()
        for (name, on) in states {
            if let variable = devices.contextVariables[name] { context[variable] = .string(on ? "on" : "off") }
        }
        for failure in failures { recorder.record(.error, "reading \(failure)", ["source": "gpio"]) }
        return context
    }

    /// Runs `body` with a generator of its own, seeded from the runner's: nothing is held while it runs.
    private func withRandom<T>(_ body: (inout SplitMix64) -> T) -> T {
        var random = SplitMix64(seed: seeds.withLock { $0.next() })
        return body(&random)
    }

    private func intentsJSON(_ u: Understanding) -> JSONValue {
        .array(u.intents.prefix(3).map { .object(JSONObject([("intent", .string($0.intent)), ("confidence", .number(rounded($0.confidence)))])) })
    }

    private func rounded(_ x: Double, _ places: Double = 3) -> Double {
        let scale = pow(10, places)
        return (x * scale).rounded() / scale
    }

    private func format(_ x: Double) -> String { Self.twoDecimals(x) }

    /// `x` with two decimals, as "%.2f" prints it (also "-0.00" for a small negative number). Done by hand
    /// because Foundation's `String(format:)` cost a typed turn more than its SQLite insert.
    static func twoDecimals(_ x: Double) -> String {
        guard x.isFinite, x.magnitude < 1e13 else { return String(format: "%.2f", x) }
        // printf rounds the exact binary value half to even. The product below is rounded once; when it lands
        // on exactly .5, the product's rounding error (fused multiply-add) says which side the exact value is on.
        let product = x.magnitude * 100
        let error = (-product).addingProduct(x.magnitude, 100)
        var whole = product.rounded(.down)
        let rest = product - whole
        if rest > 0.5 || (rest == 0.5 && (error > 0 || (error == 0 && whole.truncatingRemainder(dividingBy: 2) == 1))) {
            whole += 1
        }
        let hundredths = Int(whole)
        let fraction = hundredths % 100
        return (x.sign == .minus ? "-" : "") + String(hundredths / 100) + (fraction < 10 ? ".0" : ".") + String(fraction)
    }
}
