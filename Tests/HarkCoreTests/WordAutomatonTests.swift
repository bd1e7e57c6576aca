import Foundation
@testable import HarkCore
import Testing

/// The grammar as a minimal deterministic word automaton (what the recogniser hands PocketSphinx): the same
/// language as the grammar, far fewer states than PocketSphinx's expansion of the JSGF, and bad grammars named.
@Suite("Word automaton")
struct WordAutomatonTests {
    static let barista = Fixtures.packageRoot.appendingPathComponent("Intents/barista.json")
    static let workspaces: [URL] = [Fixtures.home, barista] + ["car-dashboard", "bank-simple", "serverless-home-automation"].map(Fixtures.watson)

    /// Sentences near the grammar's: each generated sentence with a word dropped, doubled, or swapped with its neighbour.
    static func nearMisses(_ sentences: [[String]]) -> [[String]] {
        var out: [[String]] = []
        for (k, s) in sentences.enumerated() where s.count > 1 {
            let i = k % s.count
            var dropped = s; dropped.remove(at: i)
            var doubled = s; doubled.insert(s[i], at: i)
            var swapped = s; swapped.swapAt(i, (i + 1) % s.count)
            out += [dropped, doubled, swapped]
        }
        return out
    }

    @Test("The automaton accepts every sentence the grammar generates, and a near miss exactly when the grammar does",
          arguments: workspaces)
    func sameLanguage(url: URL) throws {
        let grammar = SpeechGrammar(workspace: try Workspace.load(from: url))
        let automaton = try WordAutomaton(grammar: grammar)
        // At most 600 sentences, spread over the templates (car-dashboard generates thousands).
        let all = grammar.sentences(perTemplate: 5)
        let sentences = stride(from: 0, to: all.count, by: max(1, all.count / 600)).map { all[$0] }
        #expect(!sentences.isEmpty)
        for sentence in sentences { #expect(automaton.accepts(sentence), "\(sentence.joined(separator: " "))") }
        var rejected = 0
        for sentence in Self.nearMisses(sentences) {
            let expected = grammar.accepts(sentence)
            #expect(automaton.accepts(sentence) == expected, "\(sentence.joined(separator: " ")): grammar says \(expected)")
            if !expected { rejected += 1 }
        }
        #expect(rejected > 0, "the near misses should include sentences outside the grammar")
        #expect(!automaton.accepts([]) || grammar.accepts([]))
    }

    @Test("No two states of the automaton are interchangeable, and it is far smaller than PocketSphinx's JSGF expansion")
    func minimal() throws {
        let automaton = try WordAutomaton(grammar: SpeechGrammar(workspace: try Workspace.load(from: Self.barista)))
        struct Signature: Hashable { var isFinal: Bool; var edges: [Int: Int] }
        let signatures = (0..<automaton.stateCount).map { Signature(isFinal: automaton.isFinal[$0], edges: automaton.transitions[$0]) }
        #expect(Set(signatures).count == automaton.stateCount)
        // sphinxbase's jsgf_build_fsg makes 95,278 states and 834,316 transitions of the same grammar (docs/speech.md).
        #expect(automaton.stateCount < 2_000, "\(automaton.stateCount) states")
        #expect(automaton.transitionCount < 10_000, "\(automaton.transitionCount) transitions")
    }

    @Test("The FSG text has PocketSphinx's layout: header, one final state reached from every accepting state, weight 1 on every transition")
    func fsgText() throws {
        let workspace = Workspace(intents: [
            Intent(name: "light", examples: [IntentExample(text: "turn on the light"), IntentExample(text: "turn off the light"),
                                             IntentExample(text: "light on")]),
        ])
        let automaton = try WordAutomaton(grammar: SpeechGrammar(workspace: workspace))
        // turn → on|off → the → light, light → on: after merging, "turn on the light" and "turn off the light" share
        // every state but one transition.
        #expect(automaton.accepts(["turn", "off", "the", "light"]) && automaton.accepts(["light", "on"]))
        #expect(!automaton.accepts(["turn", "on"]) && !automaton.accepts(["light"]))
        let text = automaton.fsg(name: "grammar")
        let lines = text.split(separator: "\n")
        #expect(lines.prefix(4) == ["FSG_BEGIN grammar", "NUM_STATES \(automaton.stateCount + 1)", "START_STATE \(automaton.start)",
                                     "FINAL_STATE \(automaton.stateCount)"])
        #expect(lines.last == "FSG_END")
        let transitions = lines.filter { $0.hasPrefix("TRANSITION ") }
        #expect(transitions.count == automaton.transitionCount + automaton.isFinal.filter { $0 }.count)
        #expect(transitions.allSatisfy { $0.split(separator: " ")[3] == "1.0" })
        #expect(automaton.stateCount == 6, "\(text)")
    }

    @Test("Other values: each entity rule also takes the placeholder, which the FSG writes as a loop of at least one phone into the same state")
    func otherValues() throws {
        let workspace = Workspace(
            intents: [Intent(name: "on", examples: [IntentExample(text: "turn on the lamp"), IntentExample(text: "switch the lamp on"),
                                                    IntentExample(text: "lamp on")]),
                      Intent(name: "time", examples: [IntentExample(text: "what time is it")])],
            entities: [EntityDefinition(name: "device", values: [EntityValue(value: "light", kind: .synonyms(["lamp", "bulb"]))])])
        let grammar = SpeechGrammar(workspace: workspace)
        let open = grammar.withOtherValues()
        let automaton = try WordAutomaton(grammar: open)
        let other = SpeechGrammar.otherValueWord
        #expect(automaton.accepts(["turn", "on", "the", other]) && automaton.accepts(["switch", "the", other, "on"]))
        #expect(automaton.accepts(["turn", "on", "the", "bulb"]))
        #expect(!automaton.accepts(["what", other, "is", "it"]), "only the entity's places take it")
        #expect(automaton.accepts(["bulb", "on"]) && !automaton.accepts([other, "on"]), "not where a value opens the sentence")
        #expect(!(try WordAutomaton(grammar: grammar)).accepts(["turn", "on", "the", other]))

        let phones = (words: ["[value-aa]", "[value-b]"], probability: 0.25)
        let text = automaton.fsg(name: "grammar", otherValue: phones)
        let lines = text.split(separator: "\n").map(String.init)
        let placeholders = automaton.transitions.reduce(0) { n, edges in n + edges.keys.filter { automaton.words[$0] == other }.count }
        #expect(placeholders == 2, "one place after the merge for each template shape: \(text)")
        #expect(lines[1] == "NUM_STATES \(automaton.stateCount + 1 + placeholders)")
        #expect(!text.contains(other))
        // Per place: both phones into its state, both around it, one null move out.
        let loopLines = lines.filter { $0.hasSuffix(" [value-aa]") || $0.hasSuffix(" [value-b]") }
        #expect(loopLines.count == placeholders * 4 && loopLines.allSatisfy { $0.split(separator: " ")[3] == "0.25" })
        let selfLoops = loopLines.filter { line in let f = line.split(separator: " "); return f[1] == f[2] }
        #expect(selfLoops.count == placeholders * 2 && selfLoops.allSatisfy { Int($0.split(separator: " ")[1])! > automaton.stateCount })
        // Without the loop the placeholder is an ordinary word of the file.
        #expect(automaton.fsg(name: "grammar").contains(" \(other)"))
    }

    @Test("A rule that uses itself, or one used but never defined, is an error naming it")
    func badRules() {
        let recursive = SpeechGrammar(templates: [[.word("say"), .rule("loop")]], rules: ["loop": [[.word("again")], [.word("again"), .rule("loop")]]])
        #expect(throws: WordAutomaton.Failure.recursiveRule("loop")) { try WordAutomaton(grammar: recursive) }
        let undefined = SpeechGrammar(templates: [[.word("order"), .rule("drink")]], rules: [:])
        #expect(throws: WordAutomaton.Failure.undefinedRule("drink")) { try WordAutomaton(grammar: undefined) }
        #expect(WordAutomaton.Failure.recursiveRule("loop").description.contains("<loop>"))
    }
}
