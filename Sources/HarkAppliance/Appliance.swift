import Foundation
import HarkAudio
import HarkCore
import HarkDevices
import HarkSpeech

/// The always-on loop: idle → listening (LED on, an earcon) → understanding → speaking and acting → idle,
/// or straight back to listening when the dialog waits for an answer (a slot prompt).
///
/// One thread — the one that calls `run` — owns the microphone stream, the recogniser and the conversation,
/// so a turn never races another. Everything else (the console, the button, the web, signals) posts a
/// `Trigger` to `triggers`, which the loop drains between 100 ms blocks of audio.
public final class Appliance {
    /// How audio starts a turn.
    public enum AudioMode: String, Sendable {
        /// The wake phrase starts listening (the appliance's normal mode with a microphone).
        case wake
        /// Every stretch of speech is a turn, as if the button were pressed for it (`hark run --input`).
        case everySpeech
        /// Only the button or the console starts listening; audio is otherwise ignored.
        case triggered
    }

    public enum State: String, Sendable { case idle, listening, understanding, speaking }

    public let configuration: ApplianceConfiguration
    public let turns: TurnRunner
    public var devices: DeviceSet { turns.devices }
    public let triggers = TriggerQueue()
    public private(set) var state = State.idle
    /// The conversation so far (Watson context), carried from turn to turn.
    public private(set) var context = JSONObject()

    let understanding: SpeechUnderstanding
    let listener: UtteranceListener?
    let wake: (any WakeDetector)?
    let synthesizer: SpeechSynthesizer?
    let speaker: (any AudioSink)?
    var recorder: EventRecorder { turns.recorder }

    /// Samples of the stream consumed so far: the clock for listening timeouts.
    private var streamSamples = 0
    private static let block = 1_600

    /// The turn being listened for: who asked, since when, and whether the button is being held.
    private struct Listening {
        var source: TurnSource
        /// What opened the microphone: `wake`, `button`, `console`, `speech`, `follow-up`.
        var cause: String
        var startSample: Int
        var holding: Bool
        /// Where the stream was when the held button was let go; the utterance ends `releaseTail` later.
        var releasedAt: Int?
    }
    /// After the held button is let go, the utterance takes this much more audio (it ends sooner on silence):
    /// people let go as they finish the last word, and a decoder given no silence after it scores the sentence
    /// lower ("turn off the light" 0.81 cut at the release, 0.91 with the silence after it).
    static let releaseTail = 0.4
    private var listening: Listening?
    private var stopping = false
    /// The room's mix on its way to the speaker: one resampler kept across blocks, so block edges leave no
    /// clicks (made when the first block of a room arrives).
    private var roomPlayback: Resampler?
    /// Issues a one-time pairing code for the web page (nil when there is no server), and shows it.
    public var pairingCode: (() -> String?)?
    public var printPairingCode: ((String) -> Void)?

    /// - Parameters:
    ///   - turns: runs each turn (shared with the server, which runs web turns through the same runner).
    ///   - recognizer: decodes speech with the workspace's grammar; nil when there is no microphone.
    ///   - wake: the wake-phrase spotter for `AudioMode.wake`.
    ///   - synthesizer/speaker: replies aloud; without a speaker replies are only reported.
    public init(
        configuration: ApplianceConfiguration, turns: TurnRunner, recognizer: SpeechRecognizer?,
        wake: (any WakeDetector)?, synthesizer: SpeechSynthesizer?, speaker: (any AudioSink)?
    ) throws {
        self.configuration = configuration
        self.turns = turns
        self.wake = wake
        self.synthesizer = synthesizer
        self.speaker = speaker
        understanding = turns.speechUnderstanding
        if let recognizer {
            listener = UtteranceListener(recognizer: recognizer, endpointer: try Endpointer(configuration: configuration.endpointing))
        } else {
            listener = nil
        }
    }

    // MARK: - The loop

    /// Runs until a `.stop` trigger, or — with `exitWhenInputEnds` — until the audio (or, without audio, the
    /// console) has ended and its turns are complete. Returns the process exit status.
    public func run(audio: (any AudioSource)?, mode: AudioMode, exitWhenInputEnds: Bool) -> Int32 {
        emit(.start, "Hark is running", [
            "workspace": .string(turns.assistant.workspace.source ?? ""), "mode": .string(mode.rawValue),
            "devices": .array(devices.descriptions.map { .string($0) }),
            "simulated": .array(devices.simulated.map { .string($0) }),
        ])
        let buttonWatch = watchButton()
        defer { buttonWatch?.stop() }
        setLED(false)
        // The dialog's first turn (conversation_start) runs silently: it only starts the context.
        context = turns.start().context

        var audioEnded = audio == nil
        var textEnded = false
        var status: Int32 = 0
        while !stopping {
            let pending = audioEnded ? triggers.wait(timeout: 0.1) : triggers.drain()
            for trigger in pending { handle(trigger, audio: audioEnded ? nil : audio, mode: mode, textEnded: &textEnded) }
            if stopping { break }
            if !audioEnded, let audio {
                do {
                    if let read = try audio.read(maxFrames: Self.block) {
                        let block = read.format == .speech ? read : try read.converted(to: .speech)
                        // In a room the loop hears the microphone with the room's sound taken out, and the microphone
                        // is a conversation: only the wake phrase or the button makes a turn, so speech that starts
                        // turns by itself (`--input`) is the room's, not a command.
                        if let heard = exchangeWithRoom(block) {
                            try consume(heard, mode: mode == .everySpeech ? .triggered : mode)
                        } else {
                            try consume(block, mode: mode)
                        }
                    } else {
                        audioEnded = true
                        try finishListening(reason: "end of input")
                    }
                } catch {
                    emit(.error, "audio: \(error)", ["source": "audio"])
                    audioEnded = true
                    status = 1
                }
            }
            if exitWhenInputEnds && audioEnded && (audio != nil || textEnded) {
                // Triggers posted before the end (typed lines) still get their turns.
                for trigger in triggers.drain() { handle(trigger, audio: nil, mode: mode, textEnded: &textEnded) }
                break
            }
        }
        setLED(false)
        emit(.stop, stopping ? "Hark stopped" : "Input ended", [:])
        return status
    }

    private func handle(_ trigger: Trigger, audio: (any AudioSource)?, mode: AudioMode, textEnded: inout Bool) {
        switch trigger {
        case .stop:
            stopping = true
        case .text(let text, let source):
            let typed = text.trimmingCharacters(in: .whitespacesAndNewlines)
            guard !typed.isEmpty else { return }
            if listening != nil { cancelListening() }
            turn(turns.run(text: typed, context: context, source: source), spoken: false)
        case .listen(let source):
            beginListening(source: source, cause: source.rawValue, holding: false, audio: audio)
        case .buttonPressed:
            beginListening(source: .button, cause: "button", holding: configuration.button?.mode == .hold, audio: audio)
        case .buttonReleased:
            if let l = listening, l.holding, l.releasedAt == nil {
                if listener?.endpointer.speechStartSample == nil {
                    do { try finishListening(reason: "button released") } catch { emit(.error, "recognition: \(error)", [:]) }
                } else {
                    listening?.releasedAt = streamSamples
                }
            }
        case .inputClosed:
            textEnded = true
        case .failure(let message):
            emit(.error, message, ["source": "input"])
        case .pair:
            guard let pairingCode, let code = pairingCode() else {
                emit(.error, "No pairing code: the web server is off", ["source": "pairing"])
                return
            }
            // The code itself is shown and spoken, never stored in the log.
            emit(.state, "Pairing code issued (valid 5 minutes)", ["source": "pairing"])
            printPairingCode?(code)
            speak("Your pairing code is " + code.map(String.init).joined(separator: " ") + ".")
        case .say(let text):
            speak(text)
        case .play(let sound):
            play(sound)
        }
    }

    /// One block of microphone audio, in whatever state the loop is.
    private func consume(_ block: PCMBuffer, mode: AudioMode) throws {
        streamSamples += block.frameCount
        guard let listener else { return }
        if listening == nil {
            switch mode {
            case .wake:
                try listener.endpointer.observeBackground(block)
                if let hit = try wake?.detect(block) {
                    var details: JSONObject = ["phrase": .string(hit.phrase)]
                    for (key, value) in hit.details.pairs { details[key] = value }
                    emit(.wake, "Wake phrase \"\(hit.phrase)\"", details)
                    beginListening(source: .voice, cause: "wake", holding: false, audio: nil, force: true)
                    // The command may follow the phrase without a pause: hand over what came after it.
                    if !hit.commandAudio.isEmpty { try listen(hit.commandAudio.format == .speech ? hit.commandAudio : hit.commandAudio.converted(to: .speech)) }
                }
            case .everySpeech:
                let wasWaiting = listener.endpointer.speechStartSample == nil
                let transcript = try listener.process(block)
                if wasWaiting, listener.endpointer.speechStartSample != nil {
                    // Speech began: as if the button went down for it (the utterance is already under way).
                    enterListening(source: .voice, cause: "speech", holding: false)
                }
                if let transcript { try endOfSpeech(transcript) }
            case .triggered:
                try listener.endpointer.observeBackground(block)
            }
            return
        }
        try listen(block)
    }

    /// Audio while listening: the utterance ends on silence, on its maximum length, or after
    /// `listenTimeout` seconds with no speech at all.
    private func listen(_ block: PCMBuffer) throws {
        guard let listener, let l = listening else { return }
        let dismissed = listener.dismissedUtterances
        if let transcript = try listener.process(block) {
            try endOfSpeech(transcript)
            return
        }
        // A knock or a clatter, not a voice (`Endpointer.Configuration.minimumVoiced`): when it was what started the turn
        // (every stretch of speech is one, `AudioMode.everySpeech`), the turn is over; after a wake phrase or a button the
        // listener goes on waiting for the command.
        if listener.dismissedUtterances > dismissed, l.cause == "speech", listener.endpointer.speechStartSample == nil {
            cancelListening()
            emit(.state, "Nothing heard", ["reason": "noise without a voice"])
            return
        }
        if let released = l.releasedAt, Double(streamSamples - released) >= Self.releaseTail * Double(PCMFormat.speech.sampleRate) {
            try finishListening(reason: "button released")
            return
        }
        let waited = Double(streamSamples - l.startSample) / Double(PCMFormat.speech.sampleRate)
        if listener.endpointer.speechStartSample == nil, !l.holding, waited >= configuration.listenTimeout {
            cancelListening()
            emit(.state, "Nothing heard", ["reason": .string("no speech within \(JSONValue.format(number: configuration.listenTimeout)) s")])
        }
    }

    private func beginListening(source: TurnSource, cause: String, holding: Bool, audio: (any AudioSource)?, force: Bool = false) {
        guard listener != nil, force || audio != nil else {
            emit(.error, "No microphone: cannot listen (type instead)", ["source": .string(source.rawValue), "cause": .string(cause)])
            return
        }
        listener?.reset()
        enterListening(source: source, cause: cause, holding: holding)
        if configuration.earcon { playEarcon() }
    }

    private func enterListening(source: TurnSource, cause: String, holding: Bool) {
        listening = Listening(source: source, cause: cause, startSample: streamSamples, holding: holding)
        state = .listening
        setLED(true)
        emit(.listening, "Listening", ["source": .string(source.rawValue), "cause": .string(cause)])
    }

    private func cancelListening() {
        listening = nil
        listener?.reset()
        restartWake()
        state = .idle
        setLED(false)
    }

    /// Ends the utterance now (button released, input ended) and runs its turn if speech was heard.
    private func finishListening(reason: String) throws {
        guard let listener, listening != nil || listener.endpointer.speechStartSample != nil else { return }
        if let transcript = try listener.finish() {
            try endOfSpeech(transcript)
        } else if listening != nil {
            cancelListening()
            emit(.state, "Nothing heard", ["reason": .string(reason)])
        }
    }

    private func endOfSpeech(_ transcript: Transcript) throws {
        let source = listening?.source ?? .voice
        listening = nil
        setLED(false)
        state = .understanding
        turn(turns.run(spoken: understanding.understand(transcript), context: context, source: source), spoken: true)
    }

    // MARK: - A room

    /// While the appliance is in a room: the microphone block goes to the room (echo cancelled against what the
    /// speaker played), and what the room mixed for the appliance meanwhile goes to the speaker. Returns the
    /// echo-cancelled block, or nil when it is in no room.
    private func exchangeWithRoom(_ block: PCMBuffer) -> PCMBuffer? {
        guard let presence = turns.roomLink.current, presence.currentRoom != nil else {
            roomPlayback = nil
            return nil
        }
        let exchange = presence.exchange(microphone: block)
        let heard = exchange.microphone.samples.isEmpty ? block : exchange.microphone
        let mix = exchange.mix
        guard let speaker, !mix.samples.isEmpty else { return heard }
        do {
            var out = mix
            if speaker.format.sampleRate != mix.format.sampleRate {
                if roomPlayback == nil { roomPlayback = try Resampler(from: mix.format.sampleRate, to: speaker.format.sampleRate, channels: 1) }
                out = try roomPlayback?.process(mix) ?? mix
            }
            if speaker.format.channels > 1 {
                out = PCMBuffer(format: speaker.format, samples: out.samples.flatMap { [Int16](repeating: $0, count: speaker.format.channels) })
            }
            try speaker.write(out)
        } catch {
            emit(.error, "room audio: \(error)", ["source": "audio"])
        }
        return heard
    }

    // MARK: - A turn

    /// After a turn: the reply aloud, then idle — or listening again when the dialog asked a question.
    private func turn(_ result: TurnRunner.Result, spoken: Bool) {
        if result.accepted { context = result.context }
        state = .speaking
        speak(result.reply, turn: result.turn)
        restartWake()
        listener?.reset()
        state = .idle
        // A dialog waiting for an answer listens again without a new wake phrase.
        if result.waitingForAnswer, spoken {
            beginListening(source: .voice, cause: "follow-up", holding: false, audio: nil, force: true)
        }
    }

    // MARK: - Devices, earcon, events

    /// Says `text` on the speaker, if there is one; a failure is an error event, not the end of the loop.
    private func speak(_ text: String, turn: Int64? = nil) {
        guard let synthesizer, let speaker, !text.isEmpty else { return }
        do { _ = try synthesizer.speak(text, to: speaker) } catch {
            emit(.error, "speaking: \(error)", ["source": "synthesis"], turn: turn)
        }
    }

    private func play(_ sound: PCMBuffer) {
        guard let speaker, sound.frameCount > 0 else { return }
        do { try speaker.write(sound.converted(to: speaker.format)) } catch {
            emit(.error, "playing: \(error)", ["source": "audio"])
        }
    }

    private func restartWake() {
        do { try wake?.restart() } catch { emit(.error, "wake phrase: \(error)", ["source": "wake"]) }
    }

    private func watchButton() -> ButtonWatch? {
        guard let button = devices.button else { return nil }
        let triggers = triggers
        return ButtonWatch(button: button, triggers: triggers) { error in
            // The loop reports it with the next event; a dead button must not stop the appliance.
            triggers.post(.failure("button: \(error.message)"))
        }
    }

    private func setLED(_ on: Bool) {
        guard let led = devices.outputs["led"] else { return }
        do { try led.set(on) } catch { emit(.error, "led: \(error.message)", ["source": "gpio"]) }
    }

    private func playEarcon() {
        guard let speaker else { return }
        do { try speaker.write(Earcon.listening(format: speaker.format)) } catch { emit(.error, "earcon: \(error)", ["source": "audio"]) }
    }

    private func emit(_ kind: ApplianceEvent.Kind, _ text: String, _ data: JSONObject, turn: Int64? = nil) {
        recorder.record(kind, text, data, turn: turn)
    }
}
