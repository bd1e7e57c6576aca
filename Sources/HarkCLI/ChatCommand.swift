import Foundation
import HarkCore

/// `hark chat`: a conversation over standard input, one user turn per line, context carried between turns.
enum ChatCommand: Command {
    static let name = "chat"
    static let abstract = "Talk to the assistant: one turn per input line, with dialog and context"
    static let usage = """
        USAGE: hark chat [--workspace PATH] [--json] [--alternates] [--seed N]

        Reads user turns line by line from standard input (a terminal or a pipe) and answers each one
        through the workspace's dialog, carrying the context between turns. The first answer is the
        conversation_start/welcome turn, before any input. An empty line is skipped; end of input ends the chat.
          --workspace PATH  Watson Assistant v1 workspace JSON (default Intents/home.json)
          --json            one Watson /message-shaped response per line (input, intents, entities, output, context)
          --alternates      report the top ten intents in each response
          --seed N          seed for `random` selection policies (default: a random seed)
        """

    static func run(_ args: inout Arguments) throws -> Int32 {
        let workspacePath = try args.option("--workspace")
        let json = try args.flag("--json")
        let alternates = try args.flag("--alternates")
        let seed = try args.option("--seed", parse: { UInt64($0) }, expected: "a whole number")
        try args.finish()
        let workspace = try loadWorkspace(workspacePath, quiet: true)
        let assistant: Assistant
        do { assistant = try Assistant(workspace: workspace) } catch { throw CommandFailure(message: "\(workspace.source ?? "workspace"): \(error)", exitCode: 65) }
        for w in assistant.warnings { printError("warning: \(workspace.source ?? ""): \(w)") }
        var random = SplitMix64(seed: seed ?? UInt64.random(in: 0...UInt64.max))
        let interactive = isatty(0) == 1 && !json

        func show(_ reply: Assistant.Reply) {
            if json {
                Output.line(reply.response.serialized())
                return
            }
            for line in reply.turn.text where !line.isEmpty { Output.line("hark: \(line)") }
            for a in reply.turn.actions {
                let command = a.parameters["command"]?.stringValue.map { " \($0)" } ?? ""
                Output.line("      [action: \(a.name)\(command)]")
            }
            for m in reply.turn.logMessages {
                if let level = m["level"]?.stringValue, let msg = m["msg"]?.stringValue { printError("\(level): \(msg)") }
            }
        }

        var reply = assistant.start(random: &random)
        show(reply)
        var context = reply.turn.context
        while true {
            if interactive {
                FileHandle.standardOutput.write(Data("you> ".utf8))
            }
            guard let line = readLine(strippingNewline: true) else { break }
            let text = line.trimmingCharacters(in: .whitespacesAndNewlines)
            if text.isEmpty { continue }
            reply = assistant.message(text, context: context, alternateIntents: alternates, random: &random)
            if interactive, let top = reply.understanding.reportedIntents(alternates: false).first {
                Output.line("      [#\(top.intent) \(String(format: "%.2f", top.confidence))]")
            }
            show(reply)
            context = reply.turn.context
        }
        return 0
    }
}
