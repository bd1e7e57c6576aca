import Foundation
import HarkAppliance
import HarkAudio
import HarkCore
import HarkRooms
import HarkSpeech
import Synchronization

/// The wake phrase spotted in a room member's stream (docs/rooms.md, "The wake phrase in a room"): the mixing
/// thread's `MemberWakeGate` hands the blocks of members who are speaking to one worker thread
/// ("hark-room-wake"), which runs a wake-phrase spotter over each watched stream — the same spotter and
/// settings as the appliance's microphone. On a hit it borrows the push-to-talk recogniser (`WebListening`:
/// the same grammar, and the turn runner's thresholds), listens to the command after the phrase with the
/// microphone's endpointer limits, and the turn runs as `TurnSource.room`; its reply is synthesised and mixed
/// into that room for everyone, as `/api/listen?room=` does.
///
/// Spotters are pooled: one per member watched at once (`MemberWakeGate.Limits.maximumWatched`), made at
/// start, reset when handed to another stretch of speech.
public final class MemberWake: Sendable {
    /// How a command after the phrase is listened to: the microphone's.
    public struct Listening: Sendable {
        public var endpointer: Endpointer.Configuration
        /// Seconds to wait for speech after the phrase before giving up.
        public var timeout: Double
        /// A short two-tone sound mixed into the room when the phrase is heard.
        public var earcon: Bool

        public init(endpointer: Endpointer.Configuration = Endpointer.Configuration(), timeout: Double = 6, earcon: Bool = true) {
            self.endpointer = endpointer
            self.timeout = timeout
            self.earcon = earcon
        }
    }

    /// Counters since start, for tests and measurement.
    public struct Statistics: Sendable, Equatable {
        /// Audio the spotters heard, seconds, and the worker thread's CPU time spent on it.
        public var spottedSeconds = 0.0
        public var spottingCPUSeconds = 0.0
        /// Wake phrases heard; of those, the ones whose command could not be listened to because a browser held
        /// the recogniser.
        public var wakes = 0
        public var recognizerBusy = 0
        /// Commands that went to a turn.
        public var turns = 0
        /// Audio of a watched member that found no free spotter, seconds: only a member held past the gate's cap
        /// (their command was being listened to when two others began talking) can leave another without one.
        public var unspottedSeconds = 0.0
    }

    public let gate: MemberWakeGate
    let counters = Mutex(Statistics())
    private let stopped = Atomic<Bool>(false)

    public var statistics: Statistics { counters.withLock { $0 } }

    /// Makes the spotters (throwing the first one's error: a missing model) and starts the worker; call
    /// `RoomAudio.setMemberTap(gate)` to feed it.
    public init(
        gate: MemberWakeGate, audio: RoomAudio, turns: TurnRunner, recognizers: WebListening, listening: Listening,
        makeSpotter: () throws -> any WakeDetector
    ) throws {
        self.gate = gate
        var spotters: [any WakeDetector] = []
        for _ in 0..<max(1, gate.limits.maximumWatched) { spotters.append(try makeSpotter()) }
        let worker = MemberWakeWorker(
            wake: self, audio: audio, turns: turns, recognizers: recognizers, listening: listening, spotters: spotters)
        let thread = Thread { worker.run() }
        thread.qualityOfService = .utility
        thread.start()
    }

    /// Stops the worker after the blocks it is on (the server is stopping).
    public func stop() { stopped.store(true, ordering: .relaxed) }
    var isStopped: Bool { stopped.load(ordering: .relaxed) }
}

/// The worker thread's state: the spotters and, per watched member, where they are (spotting, or listening to
/// a command). Touched by the worker thread only (hence `@unchecked Sendable`: handed to it once, at start).
private final class MemberWakeWorker: @unchecked Sendable {
    typealias Key = MemberWakeGate.Key

    private enum Phase {
        case spotting
        /// After the phrase: the command, through the borrowed recogniser; `heard` samples since the phrase.
        case command(UtteranceListener, heard: Int)
    }

    private struct Watch {
        var spotter: any WakeDetector
        var phase: Phase
        /// The member's last seconds before the phrase, for the command's endpointer to learn the noise floor
        /// from (the microphone's loop feeds it the room while it waits: `Endpointer.observeBackground`).
        var background: [Int16] = []
    }

    let wake: MemberWake
    let audio: RoomAudio
    let turns: TurnRunner
    let recognizers: WebListening
    let listening: MemberWake.Listening
    private var free: [any WakeDetector]
    private var watches: [Key: Watch] = [:]
    /// Turns run here, one at a time in order, so the worker goes on spotting meanwhile.
    private let turnQueue = DispatchQueue(label: "hark.rooms.member-turns")
    /// Each member's conversation (the dialog's context), read and written on `turnQueue` only.
    private let contexts = Mutex<[Key: JSONObject]>([:])

    init(wake: MemberWake, audio: RoomAudio, turns: TurnRunner, recognizers: WebListening, listening: MemberWake.Listening,
         spotters: [any WakeDetector]) {
        self.wake = wake
        self.audio = audio
        self.turns = turns
        self.recognizers = recognizers
        self.listening = listening
        free = spotters
    }

    func run() {
        RoomAudio.nameThisThread("hark-room-wake")
        while !wake.isStopped {
            let items = wake.gate.take(timeout: 0.5)
            // Per member, in order: a member's blocks are joined so the spotter is called once per batch.
            var order: [Key] = []
            var batches: [Key: [MemberWakeGate.Item]] = [:]
            for item in items {
                let key: Key
                switch item {
                case .audio(let k, _), .end(let k): key = k
                }
                if batches[key] == nil { order.append(key) }
                batches[key, default: []].append(item)
            }
            for key in order {
                var samples: [Int16] = []
                for item in batches[key] ?? [] {
                    switch item {
                    case .audio(_, let block): samples += block
                    case .end:
                        if !samples.isEmpty { hear(key, samples) }
                        samples.removeAll()
                        end(key)
                    }
                }
                if !samples.isEmpty { hear(key, samples) }
            }
        }
    }

    /// A watched member's next audio.
    private func hear(_ key: Key, _ samples: [Int16]) {
        let buffer = PCMBuffer(format: .speech, samples: samples)
        guard var watch = watches[key] ?? start(key) else {
            wake.counters.withLock { $0.unspottedSeconds += buffer.duration }
            return
        }
        switch watch.phase {
        case .spotting:
            let kept = Int(listening.endpointer.noiseFloorWindow * Double(PCMFormat.speech.sampleRate))
            watch.background += samples
            if watch.background.count > kept { watch.background.removeFirst(watch.background.count - kept) }
            let before = ThreadTime.cpuSeconds()
            let hit: WakeHit?
            do { hit = try watch.spotter.detect(buffer) } catch {
                turns.recorder.record(.error, "room wake phrase: \(error)", ["source": "room", "room": .string(key.room), "member": .string(key.member)])
                hit = nil
            }
            let cpu = ThreadTime.cpuSeconds() - before
            wake.counters.withLock { s in
                s.spottedSeconds += buffer.duration
                s.spottingCPUSeconds += cpu
            }
            watches[key] = watch
            if let hit { woke(key, hit) }
        case .command(let listener, let heard):
            do {
                if let transcript = try listener.process(buffer) {
                    finish(key, transcript)
                    return
                }
            } catch {
                fail(key, "recognition: \(error)")
                return
            }
            let total = heard + samples.count
            if listener.endpointer.speechStartSample == nil, Double(total) >= listening.timeout * Double(PCMFormat.speech.sampleRate) {
                cancel(key, reason: "no speech within \(JSONValue.format(number: listening.timeout)) s")
                return
            }
            watch.phase = .command(listener, heard: total)
            watches[key] = watch
        }
    }

    /// A spotter for a member who started a stretch of speech: from the pool (reset), or none when all are busy
    /// (the gate's cap keeps that from happening but for a member held past it).
    private func start(_ key: Key) -> Watch? {
        guard let spotter = free.popLast() else { return nil }
        do { try spotter.restart() } catch {
            turns.recorder.record(.error, "room wake phrase: \(error)", ["source": "room"])
        }
        let watch = Watch(spotter: spotter, phase: .spotting)
        watches[key] = watch
        return watch
    }

    /// The member's stretch is over: a command under way ends here (as at the end of an input), the spotter
    /// goes back to the pool.
    private func end(_ key: Key) {
        guard let watch = watches[key] else { return }
        if case .command(let listener, _) = watch.phase {
            // Held members are watched on; an `.end` queued before the hold is stale.
            if wake.gate.isWatching(key) { return }
            do {
                if let transcript = try listener.finish() {
                    finish(key, transcript)
                } else {
                    cancel(key, reason: "the member's stream ended")
                }
            } catch {
                fail(key, "recognition: \(error)")
            }
        }
        if let watch = watches.removeValue(forKey: key) { free.append(watch.spotter) }
    }

    private func data(_ key: Key, _ extra: JSONObject = JSONObject()) -> JSONObject {
        var data: JSONObject = ["source": "room", "room": .string(key.room), "member": .string(key.member)]
        for (k, v) in extra.pairs { data[k] = v }
        return data
    }

    private func woke(_ key: Key, _ hit: WakeHit) {
        guard var watch = watches[key] else { return }
        wake.counters.withLock { $0.wakes += 1 }
        var details: JSONObject = ["phrase": .string(hit.phrase)]
        for (k, v) in hit.details.pairs { details[k] = v }
        turns.recorder.record(.wake, "Wake phrase \"\(hit.phrase)\" from \(key.member) in room \(key.room)", data(key, details))
        guard let recognizer = recognizers.borrow() else {
            wake.counters.withLock { $0.recognizerBusy += 1 }
            turns.recorder.record(.error, "Room wake phrase: a browser is talking to the appliance; the command was not heard", data(key))
            return
        }
        let endpointer: Endpointer
        do { endpointer = try Endpointer(configuration: listening.endpointer) } catch {
            recognizers.release()
            turns.recorder.record(.error, "room wake phrase: \(error)", data(key))
            return
        }
        let listener = UtteranceListener(recognizer: recognizer, endpointer: endpointer)
        listener.reset()
        try? endpointer.observeBackground(PCMBuffer(format: .speech, samples: watch.background))
        watch.background.removeAll()
        watch.phase = .command(listener, heard: 0)
        watches[key] = watch
        wake.gate.hold(key, true)
        turns.recorder.record(.listening, "Listening to \(key.member) in room \(key.room)", data(key, ["cause": "wake"]))
        if listening.earcon { _ = audio.announce(Earcon.listening(format: .speech).samples, rooms: [key.room]) }
        // The command may follow the phrase without a pause: what the spotter heard after it is its start.
        if !hit.commandAudio.isEmpty {
            if let samples = try? (hit.commandAudio.format == .speech ? hit.commandAudio : hit.commandAudio.converted(to: .speech)).samples {
                hear(key, samples)
            }
        }
    }

    /// Back to spotting: the recogniser returned, the member no longer held.
    private func resume(_ key: Key) {
        recognizers.release()
        wake.gate.hold(key, false)
        guard var watch = watches[key] else { return }
        do { try watch.spotter.restart() } catch {
            turns.recorder.record(.error, "room wake phrase: \(error)", data(key))
        }
        watch.phase = .spotting
        watch.background.removeAll()
        watches[key] = watch
    }

    private func cancel(_ key: Key, reason: String) {
        if case .command(let listener, _)? = watches[key]?.phase { listener.reset() }
        resume(key)
        turns.recorder.record(.state, "Nothing heard", data(key, ["reason": .string(reason)]))
    }

    private func fail(_ key: Key, _ message: String) {
        if case .command(let listener, _)? = watches[key]?.phase { listener.reset() }
        resume(key)
        turns.recorder.record(.error, "room wake phrase: \(message)", data(key))
    }

    /// The command was heard: the turn runs (off this thread) and its reply is said into the room.
    private func finish(_ key: Key, _ transcript: Transcript) {
        resume(key)
        wake.counters.withLock { $0.turns += 1 }
        let turns = turns, audio = audio, recognizers = recognizers
        turnQueue.async { [self] in
            let context = contexts.withLock { $0[key] } ?? turns.start().context
            let command = turns.speechUnderstanding.understand(transcript)
            let result = turns.run(spoken: command, context: context, source: .room)
            contexts.withLock { $0[key] = result.context }
            guard !result.reply.isEmpty else { return }
            do {
                let speech = try recognizers.replySpeech(result.reply).converted(to: .speech)
                if audio.announce(speech.samples, rooms: [key.room]) == nil {
                    turns.recorder.record(.error, "Room \(key.room): a minute of announcements is waiting; the reply was not said", ["source": "room"])
                }
            } catch {
                turns.recorder.record(.error, "speaking into room \(key.room): \(error)", ["source": "room"])
            }
        }
    }
}
