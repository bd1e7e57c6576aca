import Foundation
import HarkAudio

/// One endpointed utterance at a time from a stream of audio: the endpointer decides where speech starts
/// and ends, and the recogniser decodes it so that the transcript is ready about when the endpointer
/// declares the end, not a whole decoding later.
///
/// With the batch cepstral mean (the default) a decoding needs the whole utterance, and the endpointer only
/// declares the end after `Endpointer.Configuration.trailingSilence` (0.8 s) without speech. So the listener
/// decodes the utterance up to the last speech plus `decodedTail` of what followed (0.3 s, as much quiet as
/// the endpointer keeps before the speech) as soon as that much has followed, on a thread of its own, while
/// the endpointer waits out the rest of the silence. If speech resumes, that decoding is dropped and another
/// starts after the next pause. At the end the result for the last pause is the transcript: the same audio,
/// and so the same transcript, as a decoding started at the end would give, about 0.5 s sooner
/// (docs/speech.md, "Decoding during the trailing silence"). With a live mean the recogniser is fed as audio
/// arrives instead. With a streaming mean (`RecognitionOptions.CepstralMean.streaming`) the listener's thread
/// feeds the recogniser as audio arrives, holding back what lies more than `decodedTail` after the last speech
/// until speech resumes: the decoded audio is the batch mean's, and at the end only the last blocks remain to
/// decode (docs/speech.md, "Streaming with the first seconds' mean").
///
/// An utterance the endpointer dismisses for want of a voice (`Endpointer.Configuration.minimumVoiced`: a knock,
/// not speech) is dropped with whatever was decoded of it, and the listener goes on with the next; nothing is
/// decoded at a pause before the utterance has the voice it needs.
///
/// Not Sendable: drive it from one thread. The recogniser is used by the listener's own decoding thread while
/// an utterance is in progress; do not use it elsewhere at the same time.
public final class UtteranceListener {
    public let recognizer: SpeechRecognizer
    public let endpointer: Endpointer
    /// Seconds of audio after the last speech that are decoded with the utterance (batch mean).
    public let decodedTail: Double
    /// The default `decodedTail`: the endpointer's default leading padding, so the speech sits in as much
    /// quiet after as before it.
    public static let defaultDecodedTail = 0.3

    /// Live mean: how much of the endpointer's `utterance` has been handed to the recogniser.
    private var fed = 0
    private var recognizing = false
    /// Batch mean: the decoding of the utterance up to the latest pause, running or done.
    private var speculation: SpeculativeDecode?
    /// Streaming mean: the first error of a feed on the listener's thread, reported at the end.
    private var streamFailure: StreamFailure?
    private let worker = DispatchQueue(label: "hark.utterance-decoding", qos: .userInitiated)
    private let tailSamples: Int
    /// Decodings queued since the listener was made (batch mean), for tests.
    private(set) var decodingsStarted = 0
    /// Where the decoding of the current utterance cuts it (samples from its start), once one is queued; for tests.
    var decodingCut: Int? { speculation?.cut }
    /// Streaming mean: samples of the current utterance handed to the recogniser so far; for tests.
    var streamedSamples: Int { streams ? fed : 0 }
    /// The endpointer's dismissals already handled.
    private var dismissalsSeen = 0
    /// Utterances dismissed for want of a voice since the last `reset()`: noise, not speech.
    public private(set) var dismissedUtterances = 0

    public init(recognizer: SpeechRecognizer, endpointer: Endpointer, decodedTail: Double = UtteranceListener.defaultDecodedTail) {
        self.recognizer = recognizer
        self.endpointer = endpointer
        self.decodedTail = max(0, decodedTail)
        tailSamples = Int((max(0, decodedTail) * Double(endpointer.format.sampleRate)).rounded())
    }

    /// Why the last utterance ended, once it has.
    public var endReason: EndpointerDecision.Reason? {
        if case .ended(let reason) = endpointer.decision { return reason }
        return nil
    }

    private var decodesLive: Bool { recognizer.options.cepstralMean == .live }
    private var streams: Bool { recognizer.options.cepstralMean.isStreaming }

    /// Feeds the next audio of the stream (16 kHz mono). Returns the transcript when this audio ended an
    /// utterance; audio after the end is dropped until `reset()`.
    public func process(_ buffer: PCMBuffer) throws -> Transcript? {
        let decision = try endpointer.process(buffer)
        if endpointer.dismissedUtterances != dismissalsSeen { dropDismissed() }
        if streams {
            switch decision {
            case .ended: return try finishStreaming()
            case .inSpeech: streamNewSpeech(final: false)
            case .waitingForSpeech: break
            }
            return nil
        }
        if decodesLive {
            try feedNewSpeech()
            if case .ended = decision { return try finishLive() }
            return nil
        }
        switch decision {
        case .ended: return try finishWhole()
        case .inSpeech: speculateAtPause()
        case .waitingForSpeech: break
        }
        return nil
    }

    /// The stream has ended: finishes an utterance in progress (speech cut off by the end of the input). One
    /// without the voice an utterance needs is dropped as the endpointer would have dismissed it: nil.
    public func finish() throws -> Transcript? {
        endpointer.endOfInput()
        if endpointer.dismissedUtterances != dismissalsSeen { dropDismissed() }
        if decodesLive { return recognizing ? try finishLive() : nil }
        guard endpointer.speechStartSample != nil, !endpointer.utterance.samples.isEmpty else { return nil }
        return try streams ? finishStreaming() : finishWhole()
    }

    /// The endpointer dismissed the utterance in progress: drops what was decoded of it.
    private func dropDismissed() {
        dismissedUtterances += endpointer.dismissedUtterances - dismissalsSeen
        dismissalsSeen = endpointer.dismissedUtterances
        dropUtterance()
    }

    /// Forgets the decoding of the current utterance, running or done, without a transcript.
    private func dropUtterance() {
        if streams {
            // Waits for the feeds in flight; the recogniser's next startUtterance drops what they decoded.
            worker.sync {}
            streamFailure = nil
        } else if recognizing { _ = try? recognizer.finishUtterance() }
        recognizing = false
        fed = 0
        speculation?.cancel()
        speculation = nil
    }

    /// Waits for the next utterance.
    public func reset() {
        dropUtterance()
        endpointer.reset()
        dismissalsSeen = endpointer.dismissedUtterances
        dismissedUtterances = 0
    }

    /// Reads `source` until one utterance has ended (or the source ends) and returns its transcript;
    /// nil when the source ended without speech.
    public func listen(to source: any AudioSource, blockFrames: Int = 1_600) throws -> Transcript? {
        reset()
        while let block = try source.read(maxFrames: blockFrames) {
            let speech = block.format == endpointer.format ? block : try block.converted(to: endpointer.format)
            if let transcript = try process(speech) { return transcript }
        }
        return try finish()
    }

    /// `transcript` with how long after the end decision (`ended`, uptime nanoseconds) it was ready and how much
    /// audio the listener took in for the utterance.
    private func stamped(_ transcript: Transcript, endedAt ended: UInt64) -> Transcript {
        var transcript = transcript
        transcript.resultDelayMilliseconds = Double(DispatchTime.now().uptimeNanoseconds - ended) / 1e6
        transcript.utteranceSeconds = endpointer.utterance.duration
        return transcript
    }

    // MARK: - Batch mean: decoding during the trailing silence

    /// Where the decoded audio ends, in samples from the utterance's start: `decodedTail` after the last speech
    /// (possibly beyond the audio so far).
    private var cutAfterLastSpeech: Int? {
        guard let start = endpointer.speechStartSample, let end = endpointer.speechEndSample else { return nil }
        return end - start + tailSamples
    }

    /// Once `decodedTail` of quiet has followed the last speech, starts decoding the utterance up to there.
    private func speculateAtPause() {
        guard endpointer.hasVoice, let cut = cutAfterLastSpeech, endpointer.utterance.samples.count >= cut, speculation?.cut != cut else { return }
        speculation?.cancel()
        speculation = decode(upTo: cut)
    }

    private func finishWhole() throws -> Transcript {
        let ended = DispatchTime.now().uptimeNanoseconds
        let cut = min(endpointer.utterance.samples.count, cutAfterLastSpeech ?? .max)
        let job: SpeculativeDecode
        if let speculation, speculation.cut == cut {
            job = speculation
        } else {
            speculation?.cancel()
            job = decode(upTo: cut)
        }
        speculation = nil
        return stamped(try job.wait(), endedAt: ended)
    }

    /// Queues the decoding of the utterance's first `cut` samples on the listener's thread.
    private func decode(upTo cut: Int) -> SpeculativeDecode {
        let job = SpeculativeDecode(cut: cut)
        decodingsStarted += 1
        let samples = Array(endpointer.utterance.samples[..<cut])
        let recognizer = LentRecognizer(recognizer)
        worker.async {
            guard !job.isCancelled else { return job.complete(.failure(CancellationError())) }
            job.complete(Result { try recognizer.value.decodeWhole(samples) })
        }
        return job
    }

    // MARK: - Streaming mean

    /// Queues the utterance's audio not yet fed, up to `decodedTail` after the last speech (all of it up to there
    /// when `final`), for the recogniser on the listener's thread.
    private func streamNewSpeech(final: Bool) {
        let utterance = endpointer.utterance
        let cut = min(utterance.samples.count, cutAfterLastSpeech ?? utterance.samples.count)
        guard cut > fed || (final && !recognizing) else { return }
        let samples = cut > fed ? Array(utterance.samples[fed..<cut]) : []
        let start = !recognizing
        recognizing = true
        fed = max(fed, cut)
        let recognizer = LentRecognizer(recognizer)
        let failure = streamFailure ?? StreamFailure()
        streamFailure = failure
        decodingsStarted += start ? 1 : 0
        worker.async {
            guard failure.error == nil else { return }
            do {
                if start { try recognizer.value.startUtterance() }
                if !samples.isEmpty { try recognizer.value.process(PCMBuffer(format: utterance.format, samples: samples)) }
            } catch {
                failure.error = error
            }
        }
    }

    private func finishStreaming() throws -> Transcript {
        let ended = DispatchTime.now().uptimeNanoseconds
        streamNewSpeech(final: true)
        let recognizer = LentRecognizer(recognizer)
        let failure = streamFailure
        let outcome = worker.sync { () -> Result<Transcript, any Error> in
            if let error = failure?.error { return .failure(error) }
            return Result { try recognizer.value.finishUtterance() }
        }
        recognizing = false
        fed = 0
        streamFailure = nil
        return stamped(try outcome.get(), endedAt: ended)
    }

    // MARK: - Live mean

    private func feedNewSpeech() throws {
        let utterance = endpointer.utterance
        guard utterance.samples.count > fed else { return }
        if !recognizing {
            try recognizer.startUtterance()
            recognizing = true
        }
        let fresh = PCMBuffer(format: utterance.format, samples: Array(utterance.samples[fed...]))
        try recognizer.process(fresh)
        fed = utterance.samples.count
    }

    private func finishLive() throws -> Transcript {
        let ended = DispatchTime.now().uptimeNanoseconds
        recognizing = false
        fed = 0
        return stamped(try recognizer.finishUtterance(), endedAt: ended)
    }
}

/// The recogniser handed to the listener's decoding queue. @unchecked: the listener runs every decoding on its
/// one serial queue and touches the recogniser nowhere else while it has one queued (batch mean); with a live
/// mean the queue is never used.
private struct LentRecognizer: @unchecked Sendable {
    let value: SpeechRecognizer
    init(_ value: SpeechRecognizer) { self.value = value }
}

/// The first error of a streaming utterance's feeds. @unchecked: written and read only on the listener's serial queue.
private final class StreamFailure: @unchecked Sendable {
    var error: (any Error)?
}

/// One queued decoding of an utterance's first `cut` samples, and its outcome once done.
private final class SpeculativeDecode: @unchecked Sendable {
    // @unchecked: `cancelled` and `outcome` are only touched under `lock`; `cut` never changes.
    let cut: Int
    private let lock = NSLock()
    private var cancelled = false
    private var outcome: Result<Transcript, any Error>?
    private let done = DispatchSemaphore(value: 0)

    init(cut: Int) { self.cut = cut }

    /// Drops the result: speech went on after the pause it was started at. A decoding not yet begun is skipped.
    func cancel() {
        lock.lock()
        cancelled = true
        lock.unlock()
    }

    var isCancelled: Bool {
        lock.lock()
        defer { lock.unlock() }
        return cancelled
    }

    func complete(_ result: Result<Transcript, any Error>) {
        lock.lock()
        outcome = result
        lock.unlock()
        done.signal()
    }

    /// Blocks until the decoding is done and returns its transcript, or throws its error.
    func wait() throws -> Transcript {
        done.wait()
        done.signal()
        lock.lock()
        let result = outcome
        lock.unlock()
        guard let result else { throw CancellationError() }
        return try result.get()
    }
}
