import Foundation
import HarkAudio
import HarkCore
import HarkSpeech

/// The partial transcripts of one transcription: at most one decode in flight, the words sent so far, and
/// whether the final transcript has been decided (after which nothing more is sent).
///
/// `@unchecked Sendable`: every field is read and written under `lock`, by the session's thread and the
/// worker of the partial in flight; a chunk is sent while holding it, so `finish()` orders it before the
/// transcript.
final class PartialTranscripts: @unchecked Sendable {
    private let lock = NSLock()
    private var inFlight = false
    private var finished = false
    /// The previous partial's words.
    private var previous: [String] = []
    /// The words already sent as `transcript-chunk`s.
    private var sent: [String] = []
    private var seconds = 0.0

    /// How long the last partial took to decode.
    var lastSeconds: Double { lock.withLock { seconds } }

    /// Takes the one partial slot; false when a partial is in flight or the utterance is over.
    func claim() -> Bool {
        lock.withLock {
            guard !inFlight, !finished else { return false }
            inFlight = true
            return true
        }
    }

    func unclaim() { lock.withLock { inFlight = false } }

    func finish() { lock.withLock { finished = true } }

    /// A partial's words, decoded in `decodeSeconds`: words two partials in a row agree on that extend what
    /// was sent go out as one `transcript-chunk`. The grammar forces a half-said command into some whole
    /// sentence ("turn off" heard as "cam off"), so a single partial is not trusted; the chunks joined are
    /// always a prefix of a partial, and the final `transcript` is authoritative.
    func heard(_ text: String?, decodeSeconds: Double, send: @Sendable (WyomingEvent) throws(WyomingClientGone) -> Void) {
        lock.lock()
        defer { lock.unlock() }
        inFlight = false
        seconds = decodeSeconds
        guard let text, !finished else { return }
        let current = text.split(separator: " ").map(String.init)
        let stable = Array(zip(previous, current).prefix { $0.0 == $0.1 }.map(\.0))
        previous = current
        guard stable.count > sent.count, Array(stable.prefix(sent.count)) == sent else { return }
        let added = stable[sent.count...].joined(separator: " ")
        // A client that is gone is noticed by the session's own reads and writes.
        try? send(WyomingEvent("transcript-chunk", ["text": .string(sent.isEmpty ? added : " " + added)]))
        sent = stable
    }
}

/// One partial decode on a worker thread.
///
/// `@unchecked Sendable`: the recogniser was borrowed from the pool for this job alone, and goes back to the
/// pool when the job ends; the audio is a copy.
final class PartialJob: @unchecked Sendable {
    let recognizer: SpeechRecognizer
    let pool: ResourcePool<SpeechRecognizer>
    let audio: PCMBuffer
    let partials: PartialTranscripts
    let send: @Sendable (WyomingEvent) throws(WyomingClientGone) -> Void

    init(recognizer: SpeechRecognizer, pool: ResourcePool<SpeechRecognizer>, audio: PCMBuffer, partials: PartialTranscripts,
         send: @escaping @Sendable (WyomingEvent) throws(WyomingClientGone) -> Void) {
        self.recognizer = recognizer
        self.pool = pool
        self.audio = audio
        self.partials = partials
        self.send = send
    }

    func run() {
        let started = Date()
        // A partial is a courtesy: a failure is simply no partial (the final decode reports any error).
        let text: String? = try? {
            try recognizer.startUtterance()
            try recognizer.process(audio)
            return try recognizer.partialText()
        }()
        pool.release(recognizer)
        partials.heard(text, decodeSeconds: Date().timeIntervalSince(started), send: send)
    }
}
