import Foundation
import HarkAudio
import HarkCore
import HarkSpeech

/// `hark transcribe`: audio files → words, with the acoustic confidence and the cost.
enum TranscribeCommand: Command {
    static let name = "transcribe"
    static let abstract = "Transcribe audio files with the workspace's grammar or the general English model"
    static let usage = """
        USAGE: hark transcribe [--workspace PATH | --general] [--json] [--decoder-args "NAME VALUE …"] [--model DIR] FILE...

        Prints what PocketSphinx heard in each FILE, its acoustic confidence (0–1: how much better the words
        explain the audio than a free phone loop), the audio's length and the decoding time.
          --workspace PATH  listen for this workspace's sentences (default Intents/home.json)
          --general         any English, with the general en-us language model (slower, less accurate)
          --json            one JSON object per file: file, transcript, words, acoustic_confidence, audio_seconds, decode_ms
          --decoder-args A  extra PocketSphinx arguments, as name-value pairs in one argument (e.g. narrower beams
                            for the general model: "-beam 1e-40 -wbeam 1e-25 -pbeam 1e-35 -fwdflat no")
        \(SpeechCLI.modelUsage)
        """

    static func run(_ args: inout Arguments) throws -> Int32 {
        let workspacePath = try args.option("--workspace")
        let general = try args.flag("--general")
        let json = try args.flag("--json")
        let decoderArgs = try SpeechCLI.decoderArguments(&args)
        let model = try SpeechCLI.model(&args)
        let files = try args.positionals()
        try args.finish()
        guard !files.isEmpty else { throw UsageError(message: "missing FILE") }
        if general && workspacePath != nil { throw UsageError(message: "--workspace and --general exclude each other") }
        let workspace = try loadWorkspace(workspacePath)
        var options = RecognitionOptions(search: general ? .general : .grammar)
        if let decoderArgs { options.decoderArguments = decoderArgs }
        let recognizer = try SpeechCLI.recognizer(workspace: workspace, model: model, options: options)
        var failures = 0
        var exitCode: Int32 = 0
        for file in files {
            do {
                let transcript = try recognizer.recognize(try SpeechCLI.readSpeech(file))
                if json {
                    var o = JSONObject([("file", .string(file))])
                    SpeechCLI.transcriptFields(transcript, into: &o)
                    Output.line(JSONValue.object(o).serialized())
                } else {
                    Output.line(String(format: "%@: \"%@\"  (acoustic confidence %.3f, %.2f s of audio, %.1f ms)", file, transcript.text,
                                       transcript.acousticConfidence, transcript.audioSeconds, transcript.decodeMilliseconds))
                }
            } catch {
                // One bad file does not lose the others' results; the exit code says something failed.
                failures += 1
                exitCode = max(exitCode, (error as? CommandFailure)?.exitCode ?? 65)
                printError("hark transcribe: \((error as? CommandFailure)?.message ?? "\(file): \(error)")")
            }
        }
        return failures == 0 ? 0 : exitCode
    }
}
