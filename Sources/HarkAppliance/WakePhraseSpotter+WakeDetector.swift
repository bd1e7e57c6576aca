import HarkAudio
import HarkCore
import HarkSpeech

extension WakePhraseSpotter: WakeDetector {
    public func detect(_ buffer: PCMBuffer) throws -> WakeHit? {
        guard let d = try process(buffer) else { return nil }
        var details: JSONObject = ["keyphrase_score": .number((d.keyphraseScore * 100).rounded() / 100)]
        if let c = d.confirmationScore { details["confirmation_score"] = .number((c * 100).rounded() / 100) }
        details["phrase_seconds"] = .number(((d.time - d.start) * 100).rounded() / 100)
        return WakeHit(phrase: d.phrase, commandAudio: d.commandAudio, details: details)
    }

    public func restart() throws {
        try reset()
    }
}
