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
        let playback = try ALSAPlayback(device: CheckContext.loopbackPlayback, format: .speech, latency: 0.2)
        try playback.write(played)
        // snd-aloop copies on a jiffies timer and stops at a drain without copying the last tick's samples:
        // trailing silence carries the sweep's end across.
        try playback.write(PCMBuffer(format: .speech, samples: [Int16](repeating: 0, count: 3_200)))
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
            + "after \(String(format: "%.2f", Double(first) / 16_000)) s; \(recorder.overruns) overruns"
    }

    static func speech(_ context: CheckContext) throws -> String {
        let sentence = "turn on the light"
        let recorder = try LoopbackRecorder(device: CheckContext.loopbackCapture)
        try recorder.start()
        try recorder.record(seconds: 0.3)
        let playback = try ALSAPlayback(device: CheckContext.loopbackPlayback, format: .speech, latency: 0.2)
        let delivery = try SpeechSynthesizer().speak(sentence, to: playback)
        try playback.drain()
        try recorder.record(seconds: 1.0)
        let audio = try recorder.stop()
        let peak = audio.samples.lazy.map { Int(abs(Int32($0))) }.max() ?? 0
        try expect(peak > 1_000, "the recording is silent (peak \(peak)) after playing \"\(sentence)\"")

        let recognizer = try SpeechRecognizer(
            workspace: context.workspace, pronunciations: try CustomThenESpeak(customDictionary: context.pronunciations))
        let transcript = try recognizer.recognize(audio)
        let command = SpeechUnderstanding(workspace: context.workspace).understand(transcript)
        let intent = command.intent?.intent ?? "none"
        try expect(intent == "OnLight" && command.accepted,
                   "heard \"\(transcript.text)\" (acoustic \(format(transcript.acousticConfidence))) → #\(intent) "
                   + "\(format(command.intentConfidence)), accepted \(command.accepted); expected #OnLight")
        return "\"\(sentence)\" spoken (\(format(delivery.duration)) s, \(delivery.chunkCount) chunks) into \(CheckContext.loopbackPlayback), "
            + "\(format(audio.duration)) s recorded, peak \(peak) → \"\(transcript.text)\" acoustic \(format(transcript.acousticConfidence)) "
            + "→ #\(intent) \(format(command.intentConfidence)); \(recorder.overruns) overruns"
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
