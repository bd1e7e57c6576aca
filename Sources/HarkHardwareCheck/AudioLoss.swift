import Foundation
import HarkAudio

/// One sentence the check's "person" said into the loopback: from the first write to the end of the drain.
struct Utterance: Sendable {
    let text: String
    let start: ContinuousClock.Instant
    let end: ContinuousClock.Instant
}

/// Words for audio that went missing on its way through the loopback, placed against what was being said:
/// a lost stretch that overlaps a sentence is why that sentence can be misheard.
enum AudioLoss {
    /// "0 overruns" or "3 overruns (1.20 s lost), 1 during "take a picture" (0.35 s)".
    static func describe(_ xruns: [ALSAXrun], _ noun: String, lost: String = "lost", during utterances: [Utterance]) -> String {
        guard !xruns.isEmpty else { return "0 \(noun)s" }
        var text = "\(xruns.count) \(noun)\(xruns.count == 1 ? "" : "s") \(xruns.summary(lost: lost).drop { $0 != "(" })"
        let hits = overlaps(xruns, utterances)
        if hits.isEmpty {
            text += ", none during the person's speech"
        } else {
            text += ", \(hits.count) during " + hits.map { "\"\($0.utterance.text)\" (\($0.seconds.map { String(format: "%.2f s", $0) } ?? "unmeasured"))" }
                .joined(separator: ", ")
        }
        return text
    }

    /// The xruns whose lost stretch (the `seconds` before it was recovered from) overlaps a sentence.
    static func overlaps(_ xruns: [ALSAXrun], _ utterances: [Utterance]) -> [(utterance: Utterance, seconds: Double?)] {
        xruns.compactMap { xrun in
            let began = xrun.at - .milliseconds(Int(((xrun.seconds ?? 0) * 1_000).rounded()))
            guard let hit = utterances.first(where: { began <= $0.end && xrun.at >= $0.start }) else { return nil }
            return (hit, xrun.seconds)
        }
    }

    /// Whether any stretch of the person's speech went missing.
    static func speechLost(_ xruns: [ALSAXrun], _ utterances: [Utterance]) -> Bool { !overlaps(xruns, utterances).isEmpty }
}
