import Foundation
import HarkAudio

/// Synthetic speech for tests that decide something about it (heard or not, accepted or not), made by a synthesiser's
/// command-line tool in a process of its own and read back as 16 kHz mono.
///
/// Why not `SpeechSynthesizer` in the test process: eSpeak NG keeps the phase of its pitch flutter in a static that
/// every synthesis advances and nothing resets (libespeak-ng 1.51), so within one process the same text comes out a
/// little different after whatever was said before, and tests run in parallel, in any order. 100 in-process takes
/// of "shut off the lamp" heard against home.json gave acoustic margins from -2.74 to -1.78 and values lasting up to
/// 0.485 s, against a point of -3.0 and a minimum of 0.5 s: a test near such a point failed once in five full runs.
/// A fresh process starts from the same state, so the same text, voice and rate give the same samples in every run,
/// and a test passes or fails for good (docs/speech.md, "Synthesis"). Both tools are installed by scripts/setup.sh.
public enum FreshSpeech {
    public static let eSpeakTool = "/usr/bin/espeak-ng"
    public static let fliteTool = "/usr/bin/flite"

    /// `text` in eSpeak NG's `voice` (`en-us`, `en+f3`, …) at `rate` words a minute: the library `SpeechSynthesizer`
    /// runs, with the same defaults (175 words a minute, pitch 50, amplitude 100).
    public static func eSpeak(_ text: String, voice: String = "en-us", rate: Int = 175) throws -> PCMBuffer {
        try run(eSpeakTool, text) { wav in ["-v", voice, "-s", String(rate), "-w", wav, text] }
    }

    /// `text` in flite's `voice` (`slt`, `kal`, `kal16`, `awb`, `rms`): a second synthetic voice.
    public static func flite(_ text: String, voice: String) throws -> PCMBuffer {
        try run(fliteTool, text) { wav in ["-voice", voice, "-t", text, "-o", wav] }
    }

    /// Why a clip could not be made: the tool, the text and what went wrong.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    private static func run(_ tool: String, _ text: String, arguments: (String) -> [String]) throws -> PCMBuffer {
        guard FileManager.default.isExecutableFile(atPath: tool) else {
            throw Failure(description: "\(tool) is not installed (scripts/setup.sh installs it)")
        }
        let wav = FileManager.default.temporaryDirectory.appendingPathComponent("hark-fresh-speech-\(UUID().uuidString).wav")
        defer { try? FileManager.default.removeItem(at: wav) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments(wav.path)
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Failure(description: "\(tool) failed (status \(process.terminationStatus)) on \"\(text)\"")
        }
        return try AudioFile.readSpeech(wav.path)
    }
}
