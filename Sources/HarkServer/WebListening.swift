import Foundation
import HarkAudio
import HarkSpeech

/// The browser's push-to-talk: one recogniser for the workspace (a second one beside the appliance's own
/// microphone loop, so web and voice turns never wait for each other) and the voice that speaks replies
/// into WAV files for the page to play. One browser talks at a time: the recogniser is lent out whole.
public final class WebListening: @unchecked Sendable {
    // @unchecked: the recogniser is only used by the holder of `busy`, which `lock` guards.
    private let recognizer: SpeechRecognizer
    let synthesizer: SpeechSynthesizer
    /// The endpointer settings whose voice rule judges a press (`Endpointer.Configuration.minimumVoiced`): a press that
    /// held only a knock or a chime is answered "nothing heard" rather than decoded into the nearest command.
    let endpointing: Endpointer.Configuration
    private let lock = NSLock()
    private var busy = false

    public init(recognizer: SpeechRecognizer, synthesizer: SpeechSynthesizer, endpointing: Endpointer.Configuration = Endpointer.Configuration()) {
        self.recognizer = recognizer
        self.synthesizer = synthesizer
        self.endpointing = endpointing
    }

    /// The recogniser, if no other browser is talking; give it back with `release()`.
    func borrow() -> SpeechRecognizer? {
        lock.lock()
        defer { lock.unlock() }
        if busy { return nil }
        busy = true
        return recognizer
    }

    func release() {
        lock.lock()
        busy = false
        lock.unlock()
    }

    /// `text` spoken, whole, at the synthesiser's rate (the asker gets it as a WAV file, a room mixed in).
    func replySpeech(_ text: String) throws -> PCMBuffer {
        try synthesizer.synthesize(text)
    }
}

/// A PCM buffer as a RIFF/WAVE file in memory (16-bit little-endian PCM).
enum WAV {
    static func encode(_ buffer: PCMBuffer) -> [UInt8] {
        let channels = buffer.format.channels
        let rate = buffer.format.sampleRate
        let dataBytes = buffer.samples.count * 2
        var out: [UInt8] = []
        out.reserveCapacity(44 + dataBytes)
        func ascii(_ s: String) { out += Array(s.utf8) }
        func u32(_ v: Int) { out += withUnsafeBytes(of: UInt32(v).littleEndian, Array.init) }
        func u16(_ v: Int) { out += withUnsafeBytes(of: UInt16(v).littleEndian, Array.init) }
        ascii("RIFF"); u32(36 + dataBytes); ascii("WAVE")
        ascii("fmt "); u32(16); u16(1); u16(channels); u32(rate); u32(rate * channels * 2); u16(channels * 2); u16(16)
        ascii("data"); u32(dataBytes)
        out += LittleEndianPCM.bytes(buffer.samples)
        return out
    }
}
