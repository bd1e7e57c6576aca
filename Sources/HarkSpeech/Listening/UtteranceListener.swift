import HarkAudio

/// One endpointed utterance at a time from a stream of audio: the endpointer decides where speech starts
/// and ends, and the recogniser is fed the speech as it arrives, so the transcript is ready the moment the
/// endpointer declares the end (only the final search and the confidence pass remain).
///
/// Not Sendable: it drives a `SpeechRecognizer`, which owns a C decoder.
public final class UtteranceListener {
    public let recognizer: SpeechRecognizer
    public let endpointer: Endpointer
    /// How much of the endpointer's `utterance` has been handed to the recogniser.
    private var fed = 0
    private var recognizing = false

    public init(recognizer: SpeechRecognizer, endpointer: Endpointer) {
        self.recognizer = recognizer
        self.endpointer = endpointer
    }

    /// Why the last utterance ended, once it has.
    public var endReason: EndpointerDecision.Reason? {
        if case .ended(let reason) = endpointer.decision { return reason }
        return nil
    }

    /// Feeds the next audio of the stream (16 kHz mono). Returns the transcript when this audio ended an
    /// utterance; audio after the end is dropped until `reset()`.
    public func process(_ buffer: PCMBuffer) throws -> Transcript? {
        let decision = try endpointer.process(buffer)
        try feedNewSpeech()
        if case .ended = decision { return try finishUtterance() }
        return nil
    }

    /// The stream has ended: finishes an utterance in progress (speech cut off by the end of the input).
    public func finish() throws -> Transcript? {
        guard recognizing else { return nil }
        return try finishUtterance()
    }

    /// Waits for the next utterance.
    public func reset() {
        if recognizing { _ = try? recognizer.finishUtterance() }
        recognizing = false
        fed = 0
        endpointer.reset()
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

    private func finishUtterance() throws -> Transcript {
        recognizing = false
        fed = 0
        return try recognizer.finishUtterance()
    }
}
