import Foundation
import HarkAudio
import HarkCore
import HarkSpeech

/// ALSA through `ALSAPlayback` and `ALSACapture` against snd-aloop, and speech across it.
enum AudioChecks {
    static let all: [HardwareCheck] = [
        HardwareCheck(name: "alsa.loopback", summary: "samples written with ALSAPlayback come back bit-exact through ALSACapture", run: loopback),
        HardwareCheck(name: "alsa.speech", summary: "SpeechSynthesizer speaks into the loopback; SpeechRecognizer hears #OnLight", run: speech),
        HardwareCheck(name: "alsa.missing", summary: "a missing card or substream is an error naming the device", run: missing),
    ]

    static func loopback(_ context: CheckContext) throws -> String {
        let cards = try ALSADevices.list()
        try expect(cards.contains { $0.description.contains("Loopback") || $0.name.contains("Loopback") },
                   "ALSADevices.list() shows no Loopback device: \(cards.map(\.name))")
        // A sweep of distinct values: any dropped, doubled, swapped or scaled sample breaks the match.
        let played = PCMBuffer(format: .speech, samples: (0..<16_000).map { i in Int16(truncatingIfNeeded: (i * 7919) % 60_000 - 30_000) | 1 })
        let recorder = try LoopbackRecorder(device: CheckContext.loopbackCapture)
        try recorder.start()
        // The whole 1.8 s fits the 2 s buffer, so the drain plays it in one go: no underrun however late
        // this thread runs under TCG.
        let playback = try ALSAPlayback(device: CheckContext.loopbackPlayback, format: .speech, latency: 2.0)
        try playback.write(played)
        // snd-aloop copies on a jiffies timer and at a drain gets the last tick wrong (it clears the tick's
        // start, losing the last samples, and leaves its end holding what the capture buffer held one buffer
        // earlier): trailing silence longer than the capture buffer carries the sweep's end across cleanly.
        try playback.write(LoopbackRecorder.trailingSilence)
        try playback.drain()
        try recorder.record(seconds: 0.5)
        let recorded = try recorder.stop()
        guard let first = recorded.samples.firstIndex(where: { $0 != 0 }) else {
            throw CheckFailure("\(CheckContext.loopbackCapture) recorded \(recorded.duration) s of silence")
        }
        let window = recorded.samples.dropFirst(first).prefix(played.samples.count)
        try expect(window.count == played.samples.count,
                   "recorded only \(window.count) of \(played.samples.count) samples after the first non-zero one")
        try expect(window.elementsEqual(played.samples),
                   "the recording differs from what was played (first mismatch at sample \(zip(window, played.samples).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? -1))")
        return "1.00 s written to \(CheckContext.loopbackPlayback), read back bit-exact from \(CheckContext.loopbackCapture) "
            + "after \(String(format: "%.2f", Double(first) / 16_000)) s; capture overruns \(recorder.overrunSummary), playback underruns \(playback.underruns.summary(lost: "of gaps"))"
    }

    static func speech(_ context: CheckContext) throws -> String {
        let sentence = "turn on the light"
        let recorder = try LoopbackRecorder(device: CheckContext.loopbackCapture)
        try recorder.start()
        try recorder.record(seconds: 0.3)
        // A buffer longer than the sentence: the stream starts at the drain with all of it queued, so eSpeak's
        // chunks arriving late under TCG cannot leave gaps.
        let playback = try ALSAPlayback(device: CheckContext.loopbackPlayback, format: .speech, latency: 2.0)
        let delivery = try SpeechSynthesizer().speak(sentence, to: playback)
        // Without it, the drain's last tick repeats a piece of the sentence from half a second earlier.
        try playback.write(LoopbackRecorder.trailingSilence)
        try playback.drain()
        try recorder.record(seconds: 1.0)
        let audio = try recorder.stop()
        let peak = audio.samples.lazy.map { Int(abs(Int32($0))) }.max() ?? 0
        try expect(peak > 1_000, "the recording is silent (peak \(peak)) after playing \"\(sentence)\"")

        // Without the judge against any English, as ApplianceCheck: the audio path is what is checked.
        let recognizer = try SpeechRecognizer(
            workspace: context.workspace, options: RecognitionOptions(anyEnglish: nil),
            pronunciations: try CustomThenESpeak(customDictionary: context.pronunciations))
        let transcript = try recognizer.recognize(audio)
        let command = SpeechUnderstanding(workspace: context.workspace).understand(transcript)
        let intent = command.intent?.intent ?? "none"
        try expect(intent == "OnLight" && command.accepted,
                   "heard \"\(transcript.text)\" (acoustic \(format(transcript.acousticConfidence))) → #\(intent) "
                   + "\(format(command.intentConfidence)), accepted \(command.accepted); expected #OnLight; "
                   + "capture overruns \(recorder.overrunSummary), playback underruns \(playback.underruns.summary(lost: "of gaps"))")
        return "\"\(sentence)\" spoken (\(format(delivery.duration)) s, \(delivery.chunkCount) chunks) into \(CheckContext.loopbackPlayback), "
            + "\(format(audio.duration)) s recorded, peak \(peak) → \"\(transcript.text)\" acoustic \(format(transcript.acousticConfidence)) "
            + "→ #\(intent) \(format(command.intentConfidence)); capture overruns \(recorder.overrunSummary), playback underruns \(playback.underruns.summary(lost: "of gaps"))"
    }

    static func missing(_ context: CheckContext) throws -> String {
        let card = try expectError(ALSAError.self, "opening hw:NoSuchCard,0,0") {
            _ = try ALSACapture(device: "hw:NoSuchCard,0,0", format: .speech)
        }
        try expect(card.description.contains("hw:NoSuchCard,0,0"), "missing card: the error does not name the device: \(card)")
        // The loopback card has PCM devices 0 and 1 only. (A missing substream, hw:Loopback,0,7, is EBUSY from
        // the kernel, which ALSAError words as "another program is using it".)
        let device = try expectError(ALSAError.self, "opening PCM device 5 of the loopback card") {
            _ = try ALSAPlayback(device: "hw:Loopback,5,0", format: .speech)
        }
        try expect(device.description.contains("hw:Loopback,5,0") && device.description.contains("no such device"),
                   "missing PCM device: the error does not name the device or say it is missing: \(device)")
        return "\(card) | \(device)"
    }

    static func format(_ x: Double) -> String { String(format: "%.2f", x) }
}
