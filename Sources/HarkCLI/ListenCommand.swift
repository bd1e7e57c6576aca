import Foundation
import HarkAudio
import HarkCore
import HarkSpeech

/// `hark listen`: one endpointed turn from the microphone (or a file), understood like `hark recognize`.
enum ListenCommand: Command {
    static let name = "listen"
    static let abstract = "Listen for one spoken command on the microphone and understand it"
    static let usage = """
        USAGE: hark listen [--workspace PATH] [--device NAME] [--alsa-config FILE] [--input FILE]
                           [--trailing-silence S] [--max-seconds S] [--wait S] [--json] [--model DIR]

        Captures from ALSA until speech has started and then stopped (trailing silence), recognising while
        you speak, and prints the command as `hark recognize` does.
          --workspace PATH      Watson Assistant v1 workspace JSON (default Intents/home.json)
          --device NAME         ALSA capture device (default "default")
          --alsa-config FILE    an extra ALSA configuration defining NAME (e.g. a `file` plugin PCM)
          --input FILE          read this audio file as if it were the microphone
          --trailing-silence S  silence that ends the utterance, seconds (default 0.8)
          --max-seconds S       longest utterance, seconds (default 10)
          --wait S              give up when no speech starts within S seconds of audio (default 30)
          --json                print the JSON line of `hark recognize --json`
        \(SpeechCLI.modelUsage)
        """

    static func run(_ args: inout Arguments) throws -> Int32 {
        let workspacePath = try args.option("--workspace")
        let device = try args.option("--device")
        let alsaConfig = try args.option("--alsa-config")
        let input = try args.option("--input")
        let seconds: (String) -> Double? = { Double($0).flatMap { $0 > 0 && $0.isFinite ? $0 : nil } }
        let trailing = try args.option("--trailing-silence", parse: seconds, expected: "a positive number of seconds")
        let maximum = try args.option("--max-seconds", parse: seconds, expected: "a positive number of seconds")
        let wait = try args.option("--wait", parse: seconds, expected: "a positive number of seconds") ?? 30
        let json = try args.flag("--json")
        let model = try SpeechCLI.model(&args)
        try args.finish()
        if input != nil && (device != nil || alsaConfig != nil) { throw UsageError(message: "--input excludes --device and --alsa-config") }

        var configuration = Endpointer.Configuration()
        if let trailing { configuration.trailingSilence = trailing }
        if let maximum { configuration.maximumLength = maximum }
        let endpointer: Endpointer
        do { endpointer = try Endpointer(configuration: configuration) } catch { throw UsageError(message: "\(error)") }

        let workspace = try loadWorkspace(workspacePath)
        let recognizer = try SpeechCLI.recognizer(workspace: workspace, model: model, options: RecognitionOptions())
        let source: any AudioSource
        let name: String
        do {
            if let input {
                source = try AudioFileSource(path: input, convertingTo: .speech)
                name = input
            } else {
                name = device ?? "default"
                source = try ALSACapture(device: name, format: .speech, configFile: alsaConfig)
            }
        } catch let error as SndfileError {
            throw CommandFailure(message: error.description, exitCode: error.kind == .missingFile ? 66 : 65)
        } catch {
            throw CommandFailure(message: "\(error)", exitCode: 69)
        }
        if input == nil { printError("hark listen: listening on \(name)…") }

        let listener = UtteranceListener(recognizer: recognizer, endpointer: endpointer)
        let block = 1_600  // 100 ms
        var transcript: Transcript?
        var heard = 0
        while transcript == nil, let buffer = try source.read(maxFrames: block) {
            transcript = try listener.process(buffer.format == .speech ? buffer : buffer.converted(to: .speech))
            heard += buffer.frameCount
            if transcript == nil, endpointer.speechStartSample == nil, Double(heard) / Double(source.format.sampleRate) >= wait {
                throw CommandFailure(message: "no speech within \(wait) s on \(name)", exitCode: 1)
            }
        }
        if transcript == nil { transcript = try listener.finish() }
        guard let transcript else { throw CommandFailure(message: "\(name) ended without speech", exitCode: 1) }
        let command = SpeechUnderstanding(workspace: workspace).understand(transcript)
        if json { Output.line(SpeechCLI.json(file: name, command: command).serialized()) } else { print(SpeechCLI.text(file: name, command: command), terminator: "") }
        return 0
    }
}
