import Foundation
import HarkCore

@main
struct HarkMain {
    /// The release, printed by `hark --version`; scripts/deb/build.sh reads it from this line for the package's version.
    static let version = "0.15.0"

    static let commands: [any Command.Type] = [
        RunCommand.self,
        ServeCommand.self,
        DevicesCommand.self,
        EventsCommand.self,
        PairCommand.self,
        PasswdCommand.self,
        LinkCommand.self,
        ParseCommand.self,
        ChatCommand.self,
        EvalCommand.self,
        GrammarCommand.self,
        TranscribeCommand.self,
        RecognizeCommand.self,
        ListenCommand.self,
        SayCommand.self,
        EchoCancelCommand.self,
        WyomingCommand.self,
    ]

    static let overview = """
        hark — an offline voice assistant: listens, understands a Watson Assistant v1 workspace, answers and acts.

        USAGE: hark <command> [options]

        COMMANDS:
        \(commands.map { "  " + $0.name.padding(toLength: 12, withPad: " ", startingAt: 0) + $0.abstract }.joined(separator: "\n"))

        Run `hark <command> --help` for a command's options. The workspace defaults to Intents/home.json.
        `hark --version` prints the release and where the shipped files (Intents/, Models/, web/) were found.
        """

    static func main() {
        var argv = Array(CommandLine.arguments.dropFirst())
        guard let first = argv.first else {
            printError(overview)
            exit(64)
        }
        if first == "--help" || first == "-h" || first == "help" {
            print(overview)
            exit(0)
        }
        if first == "--version" {
            // The second line shows the shipped-file lookup at work: a checkout, or /usr/share/hark when installed.
            let searched = SpeechCLI.searchDirectories().map(\.path).joined(separator: ", ")
            let shipped = SpeechCLI.repositoryFile("Intents/home.json")?.deletingLastPathComponent().deletingLastPathComponent().path
            print("hark \(version)")
            print("shipped files: " + (shipped ?? "not found (looked in \(searched))"))
            exit(0)
        }
        guard let command = commands.first(where: { $0.name == first }) else {
            printError("hark: unknown command \"\(first)\"\n\n\(overview)")
            exit(64)
        }
        argv.removeFirst()
        if argv.contains("--help") || argv.contains("-h") {
            print(command.usage)
            exit(0)
        }
        var args = Arguments(argv)
        do {
            exit(try command.run(&args))
        } catch let e as UsageError {
            printError("hark \(command.name): \(e.message)\n\n\(command.usage)")
            exit(64)
        } catch let e as CommandFailure {
            printError("hark \(command.name): \(e.message)")
            exit(e.exitCode)
        } catch {
            printError("hark \(command.name): \(error)")
            exit(1)
        }
    }
}
