import Foundation

/// Delivers another source's audio no faster than real time, as a microphone would: a block of N frames is
/// returned no earlier than N / rate seconds after the previous one was due. `hark run --input FILE` uses
/// it so a recorded file behaves like the microphone (endpointing, wake timing, LED and button timing).
public final class PacedAudioSource: AudioSource {
    public let source: any AudioSource
    public var format: PCMFormat { source.format }
    private var started: Date?
    private var framesDelivered = 0

    public init(_ source: any AudioSource) {
        self.source = source
    }

    public func read(maxFrames: Int) throws -> PCMBuffer? {
        let start = started ?? Date()
        started = start
        guard let block = try source.read(maxFrames: maxFrames) else { return nil }
        framesDelivered += block.frameCount
        // The block is "captured" once its last frame has been spoken.
        let due = start.addingTimeInterval(Double(framesDelivered) / Double(format.sampleRate))
        let wait = due.timeIntervalSinceNow
        if wait > 0 { Thread.sleep(forTimeInterval: wait) }
        return block
    }
}
