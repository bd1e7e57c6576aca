import HarkAudio

/// How `SpeechSynthesizer.speak(_:to:)` delivered a reply: when audio first reached the sink, how long the
/// whole synthesis took, and how much audio went out in how many writes.
public struct SpeechDelivery: Sendable, Equatable {
    /// From the call to the first `write` on the sink: how long a listener waits before hearing anything.
    public var timeToFirstAudio: Duration
    /// From the call to the last `write`: synthesis, conversion and writing of the whole reply.
    public var totalTime: Duration
    /// The number of `write` calls made on the sink.
    public var chunkCount: Int
    /// The number of frames written, in the sink's format.
    public var frameCount: Int
    /// The sink's format, which every written buffer had.
    public var format: PCMFormat

    /// The length of the audio written.
    public var duration: Double { Double(frameCount) / Double(format.sampleRate) }
}
