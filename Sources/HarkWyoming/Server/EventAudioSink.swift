import HarkAudio
import HarkCore

/// Synthesised audio as `audio-chunk` events, timestamped in milliseconds from the start of the audio.
/// Remembers the client's disappearance, which the synthesizer only sees as a failed write.
final class EventAudioSink: AudioSink {
    let format: PCMFormat
    private let sendEvent: @Sendable (WyomingEvent) throws(WyomingClientGone) -> Void
    private var frames = 0
    private(set) var gone: WyomingClientGone?

    init(format: PCMFormat, send: @escaping @Sendable (WyomingEvent) throws(WyomingClientGone) -> Void) {
        self.format = format
        sendEvent = send
    }

    var milliseconds: Int { frames * 1000 / format.sampleRate }

    func write(_ buffer: PCMBuffer) throws {
        let payload = LittleEndianPCM.bytes(buffer.samples)
        let data: JSONObject = [
            "rate": .number(Double(format.sampleRate)), "width": 2, "channels": .number(Double(format.channels)),
            "timestamp": .number(Double(milliseconds)),
        ]
        frames += buffer.frameCount
        do { try sendEvent(WyomingEvent("audio-chunk", data, payload: payload)) } catch {
            gone = error
            throw error
        }
    }

    func drain() throws {}
}
