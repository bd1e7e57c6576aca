import Foundation
import HarkCore

/// `hark grammar`: what the recogniser listens for, as PocketSphinx receives it.
enum GrammarCommand: Command {
    static let name = "grammar"
    static let abstract = "Print the JSGF grammar (or ARPA model) generated from a workspace, and its words"
    static let usage = """
        USAGE: hark grammar [--workspace PATH] [--arpa | --words]

        Prints the factored JSGF grammar the recogniser decodes with: every intent example with its entity
        mentions replaced by rules listing all values and synonyms, number words for @sys-number.
          --workspace PATH  Watson Assistant v1 workspace JSON (default Intents/home.json)
          --arpa            print the trigram ARPA language model of the same sentences instead
          --words           print the vocabulary, one word per line
        """

    static func run(_ args: inout Arguments) throws -> Int32 {
        let workspacePath = try args.option("--workspace")
        let arpa = try args.flag("--arpa")
        let words = try args.flag("--words")
        try args.finish()
        if arpa && words { throw UsageError(message: "--arpa and --words exclude each other") }
        let grammar = SpeechGrammar(workspace: try loadWorkspace(workspacePath))
        if words {
            for word in grammar.vocabulary { Output.line(word) }
        } else {
            print(arpa ? grammar.arpaLanguageModel() : grammar.jsgf, terminator: "")
        }
        return 0
    }
}
