import Foundation
import HarkAudio

/// `hark echo-cancel`: runs the echo canceller the appliance uses as a room member over two recordings, so the
/// cancellation can be heard and measured (bench/aec.py) without a speaker or a microphone.
enum EchoCancelCommand: Command {
    static let name = "echo-cancel"
    static let abstract = "Take the echo of a played recording out of a microphone recording (speexdsp)"
    static let usage = """
        USAGE: hark echo-cancel --played FILE --microphone FILE --output FILE.wav [--tail MS] [--no-residual] [--no-align]

        Both inputs are converted to 16 kHz mono; the played one is cut or padded with silence to the
        microphone's length. The output is the microphone with the echo of the played audio taken out.
          --played FILE      what the loudspeaker played (the far end of the room)
          --microphone FILE  what the microphone captured meanwhile (echo, and perhaps a local voice)
          --output FILE      where the cleaned microphone goes (WAV or FLAC, by extension)
          --tail MS          the longest echo the filter models, in milliseconds (default \(EchoCanceller.Configuration().tailMilliseconds))
          --no-residual      the linear filter only, without the residual echo suppressor
          --no-align         do not measure the echo's delay (the filter starts at the played audio's time)
        """

    static func run(_ args: inout Arguments) throws -> Int32 {
        guard let playedPath = try args.option("--played") else { throw UsageError(message: "missing --played FILE") }
        guard let micPath = try args.option("--microphone") else { throw UsageError(message: "missing --microphone FILE") }
        guard let output = try args.option("--output") else { throw UsageError(message: "missing --output FILE") }
        var configuration = EchoCanceller.Configuration()
        if let tail = try args.option("--tail", parse: { Int($0) }, expected: "a whole number of milliseconds") {
            guard (10...2000).contains(tail) else { throw UsageError(message: "--tail \(tail): give 10 to 2000 milliseconds") }
            configuration.tailMilliseconds = tail
        }
        configuration.residualSuppression = !(try args.flag("--no-residual"))
        configuration.alignment = !(try args.flag("--no-align"))
        try args.finish()
        let played: PCMBuffer
        let microphone: PCMBuffer
        do {
            played = try AudioFile.readSpeech(playedPath)
            microphone = try AudioFile.readSpeech(micPath)
        } catch {
            throw CommandFailure(message: "\(error)", exitCode: 66)
        }
        var far = Array(played.samples.prefix(microphone.samples.count))
        far += [Int16](repeating: 0, count: microphone.samples.count - far.count)
        let canceller = try EchoCanceller(configuration: configuration)
        var cleaned = try canceller.process(microphone: microphone, played: PCMBuffer(format: .speech, samples: far))
        // The last partial frame has no echo estimate: passed through as it was.
        cleaned = PCMBuffer(format: .speech, samples: cleaned.samples + microphone.samples.suffix(microphone.samples.count - cleaned.samples.count))
        do {
            try AudioFile.write(cleaned, to: output)
        } catch {
            throw CommandFailure(message: "\(error)", exitCode: 73)
        }
        if configuration.alignment {
            if let delay = canceller.alignedDelayMilliseconds, let at = canceller.alignedAtSample {
                printError("hark echo-cancel: the far end delayed by \(delay) ms (the echo's onset less \(configuration.alignmentMarginMilliseconds) ms), set after \(String(format: "%.2f", Double(at) / Double(configuration.sampleRate))) s")
            } else {
                printError("hark echo-cancel: no echo delay found (no echo stood out of the microphone): the far end was not delayed")
            }
        }
        return 0
    }
}
