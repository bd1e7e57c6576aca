import Foundation
import HarkAudio
import HarkCore
import HarkSpeech

/// `hark say`: speak a sentence with eSpeak NG, to the speaker or to a WAV file.
enum SayCommand: Command {
    static let name = "say"
    static let abstract = "Speak TEXT with eSpeak NG, on the speaker or into a WAV file"
    static let usage = """
        USAGE: hark say [--voice V] [--rate N] [--pitch N] [--output FILE.wav | --device NAME] TEXT...

        Synthesises TEXT in-process with eSpeak NG (22.05 kHz), converted to the output's rate; playback
        starts while the rest of a long reply is still being synthesised.
          --voice V        eSpeak NG voice, e.g. en-us, en, en+f3 (default \(SpeechSynthesizer.defaultVoice)); --voice list shows them
          --rate N         words per minute, \(SpeechSynthesizer.rateRange.lowerBound)–\(SpeechSynthesizer.rateRange.upperBound) (default \(SpeechSynthesizer.defaultRate))
          --pitch N        0–100 (default \(SpeechSynthesizer.defaultPitch))
          --output FILE    write a 16 kHz mono WAV (or FLAC, by extension) instead of playing
          --device NAME    ALSA playback device (default "default")
        """

    static func run(_ args: inout Arguments) throws -> Int32 {
        let voice = try args.option("--voice") ?? SpeechSynthesizer.defaultVoice
        let rate = try args.option("--rate", parse: { Int($0) }, expected: "a whole number of words per minute") ?? SpeechSynthesizer.defaultRate
        let pitch = try args.option("--pitch", parse: { Int($0) }, expected: "a whole number 0–100") ?? SpeechSynthesizer.defaultPitch
        let output = try args.option("--output")
        let device = try args.option("--device")
        let words = try args.positionals()
        try args.finish()
        if voice == "list" {
            for v in try SpeechSynthesizer.availableVoices() { Output.line("\(v.identifier)\t\(v.name)\t\(v.languages.joined(separator: ","))") }
            return 0
        }
        guard !words.isEmpty else { throw UsageError(message: "missing TEXT") }
        if output != nil && device != nil { throw UsageError(message: "--output and --device exclude each other") }
        let text = words.joined(separator: " ")
        let synthesizer: SpeechSynthesizer
        do {
            synthesizer = try SpeechSynthesizer(voice: voice, rate: rate, pitch: pitch)
        } catch {
            throw UsageError(message: "\(error)")
        }
        let sink: any AudioSink
        do {
            if let output {
                sink = try AudioFileSink(path: output, format: .speech)
            } else {
                sink = try ALSAPlayback(device: device ?? "default", format: SpeechSynthesizer.playbackFormat)
            }
        } catch {
            throw CommandFailure(message: "\(error)", exitCode: 69)
        }
        let delivery = try synthesizer.speak(text, to: sink)
        try sink.drain()
        if let output {
            printError(String(format: "hark say: wrote %@ (%.2f s of audio; first audio after %.1f ms)", output, delivery.duration,
                              milliseconds(delivery.timeToFirstAudio)))
        }
        return 0
    }
}

/// A Swift `Duration` in milliseconds, for printing.
func milliseconds(_ d: Duration) -> Double {
    d.timeInterval * 1_000
}
