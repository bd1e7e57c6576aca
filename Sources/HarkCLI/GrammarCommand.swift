import Foundation
import HarkCore

/// `hark grammar`: what the recogniser listens for, as PocketSphinx receives it.
enum GrammarCommand: Command {
    static let name = "grammar"
    static let abstract = "Print the JSGF grammar (or its automaton, or ARPA model) generated from a workspace, and its words"
    static let usage = """
        USAGE: hark grammar [--workspace PATH] [--courtesy on|off] [--fsg | --arpa | --words]

        Prints the factored JSGF grammar of the workspace: every intent example with its entity mentions
        replaced by rules listing all values and synonyms, number words for @sys-number. The recogniser
        decodes the same language as a minimal word automaton (--fsg), far smaller than PocketSphinx's own
        expansion of the JSGF.
          --workspace PATH  Watson Assistant v1 workspace JSON (default Intents/home.json)
          --courtesy on|off each example also with courtesy words around it ("could you … please"); by default
                            as the recogniser hears clean speech: on for workspaces of two intents or more
                            (docs/speech.md, "Courtesy words")
          --fsg             print that automaton in PocketSphinx's FSG format, its size on standard error
          --arpa            print the trigram ARPA language model of the same sentences instead
          --words           print the vocabulary, one word per line
        """

    static func run(_ args: inout Arguments) throws -> Int32 {
        let workspacePath = try args.option("--workspace")
        let arpa = try args.flag("--arpa")
        let words = try args.flag("--words")
        let fsg = try args.flag("--fsg")
        let courtesy = try args.onOff("--courtesy")
        try args.finish()
        if [arpa, words, fsg].filter({ $0 }).count > 1 { throw UsageError(message: "--fsg, --arpa and --words exclude each other") }
        let workspace = try loadWorkspace(workspacePath)
        let plain = SpeechGrammar(workspace: workspace)
        let grammar = (courtesy ?? SpeechGrammar.Courtesy.applies(to: workspace)) ? plain.withCourtesy() : plain
        if fsg {
            let automaton: WordAutomaton
            do { automaton = try WordAutomaton(grammar: grammar) } catch { throw CommandFailure(message: "\(error)", exitCode: 65) }
            printError("hark grammar: \(automaton.stateCount) states, \(automaton.transitionCount) word transitions")
            print(automaton.fsg(name: "grammar"), terminator: "")
        } else if words {
            for word in grammar.vocabulary { Output.line(word) }
        } else {
            print(arpa ? grammar.arpaLanguageModel() : grammar.jsgf, terminator: "")
        }
        return 0
    }
}
