import Foundation
import Testing

@testable import HarkCore

@Suite("Speech grammar")
struct GrammarTests {
    static let workspaces: [URL] = [Fixtures.home] + ["car-dashboard", "bank-simple", "serverless-home-automation"].map(Fixtures.watson)

    @Test("Text becomes dictionary words: lower case, apostrophes kept, punctuation dropped, digits spelled")
    func normalisation() {
        #expect(SpeechText.words("What's the time?") == ["what's", "the", "time"])
        #expect(SpeechText.words("Go forward 10 meters!") == ["go", "forward", "ten", "meters"])
        #expect(SpeechText.words("set it to 21.5, please") == ["set", "it", "to", "twenty", "one", "point", "five", "please"])
        #expect(SpeechText.words("the 2nd floor") == ["the", "second", "floor"])
        #expect(SpeechText.words("twenty-one 1,205") == ["twenty", "one", "one", "thousand", "two", "hundred", "five"])
        #expect(SpeechText.words("call 007") == ["call", "zero", "zero", "seven"])
    }

    @Test("Entity values and synonyms in unannotated examples become the entity's rule, longest match first")
    func entityRules() {
        let workspace = Workspace(
            intents: [Intent(name: "on", examples: [IntentExample(text: "Turn on the ceiling light."), IntentExample(text: "turn on the fan")])],
            entities: [EntityDefinition(name: "device", values: [
                EntityValue(value: "light", kind: .synonyms(["lamp", "ceiling light"])),
                EntityValue(value: "fan", kind: .synonyms([])),
            ])],
            counterexamples: ["play some music"])
        let grammar = SpeechGrammar(workspace: workspace)
        #expect(grammar.templates == [[.word("turn"), .word("on"), .word("the"), .rule("device")]])
        #expect(grammar.rules["device"]?.count == 4)
        for sentence in ["turn on the lamp", "turn on the ceiling light", "turn on the fan"] {
            #expect(grammar.accepts(text: sentence), "\(sentence)")
        }
        #expect(!grammar.accepts(text: "turn on the ceiling"))
        #expect(!grammar.accepts(text: "play some music"))
        #expect(grammar.vocabulary == ["ceiling", "fan", "lamp", "light", "on", "the", "turn"])
    }

    @Test("With courtesy, every example may open with \"could you\", \"can you\", \"would you\" or \"please\" and close with \"please\", once")
    func courtesyWords() throws {
        let workspace = Workspace(
            intents: [Intent(name: "on", examples: [IntentExample(text: "turn on the light"), IntentExample(text: "could you open the door")]),
                      Intent(name: "hello", examples: [IntentExample(text: "hello"), IntentExample(text: "please")])],
            entities: [EntityDefinition(name: "device", values: [EntityValue(value: "light", kind: .synonyms(["lamp"]))])])
        let plain = SpeechGrammar(workspace: workspace)
        let polite = plain.withCourtesy()
        for sentence in ["could you turn on the lamp please", "please turn on the light", "turn on the light please",
                         "can you turn on the light", "would you turn on the lamp please", "could you open the door please",
                         "hello please", "please hello"] {
            #expect(polite.accepts(text: sentence), "\(sentence)")
            #expect(!plain.accepts(text: sentence), "\(sentence)")
        }
        // Every example of the plain grammar is still there; an example that already opens or closes with a
        // courtesy word gets no second one.
        for sentence in ["turn on the light", "could you open the door", "hello", "please"] { #expect(polite.accepts(text: sentence)) }
        for sentence in ["could you could you open the door", "can you could you open the door", "please please",
                         "please please please", "turn on the light please please", "please could you turn on the light"] {
            #expect(!polite.accepts(text: sentence), "\(sentence)")
        }
        #expect(plain.vocabulary.contains("please") && !plain.vocabulary.contains("would"))
        #expect(Set(polite.vocabulary).isSuperset(of: ["could", "can", "would", "you", "please"]))
        // The automaton the recogniser decodes takes the same sentences.
        let automaton = try WordAutomaton(grammar: polite)
        #expect(automaton.accepts(SpeechText.words("could you turn on the lamp please")))
        #expect(!automaton.accepts(SpeechText.words("please please please")))
        // A recogniser gives them to workspaces of two intents with examples or more, not to one of orders alone.
        #expect(SpeechGrammar.Courtesy.applies(to: workspace))
        #expect(!SpeechGrammar.Courtesy.applies(to: Workspace(intents: [
            Intent(name: "order", examples: [IntentExample(text: "can i have a latte")]), Intent(name: "empty", examples: []),
        ])))
    }

    @Test("Mentions become rules; digits become the number rule when @sys-number is on")
    func mentionsAndNumbers() {
        let text = "set the heat to 21 in the kitchen"
        let workspace = Workspace(
            intents: [Intent(name: "heat", examples: [
                IntentExample(text: text, mentions: [Mention(entity: "room", start: 26, end: 33)])
            ])],
            entities: [EntityDefinition(name: "room", values: [EntityValue(value: "kitchen", kind: .synonyms(["living room"]))])],
            systemEntities: ["sys-number"])
        let grammar = SpeechGrammar(workspace: workspace)
        #expect(grammar.templates.first?.last == .rule("room"))
        #expect(grammar.templates.first?.contains(.rule(SpeechGrammar.numberRule)) == true)
        #expect(grammar.accepts(text: "set the heat to 21 in the living room"))
        #expect(grammar.accepts(text: "set the heat to two hundred and five in the kitchen"))
        #expect(grammar.accepts(text: "set the heat to 3000 in the kitchen"))
        #expect(grammar.accepts(text: "set the heat to 20.5 in the kitchen"))
        #expect(!grammar.accepts(text: "set the heat to in the kitchen"))
    }

    @Test("Shared beginnings and endings are merged: the graph is much smaller than the flat list")
    func factoring() {
        let carriers = ["can i have", "can i get", "give me", "i'd like"]
        let drinks = ["a latte", "a mocha", "an espresso"]
        let tails = ["", " with milk", " with sugar"]
        var examples: [IntentExample] = []
        for c in carriers { for d in drinks { for t in tails { examples.append(IntentExample(text: "\(c) \(d)\(t)")) } } }
        let grammar = SpeechGrammar(workspace: Workspace(intents: [Intent(name: "order", examples: examples)]))
        let flatTokens = grammar.templates.reduce(0) { $0 + $1.count }
        #expect(grammar.graph.edgeCount * 4 < flatTokens)
        for example in examples { #expect(grammar.accepts(text: example.text)) }
        #expect(!grammar.accepts(text: "can i like a latte"))
        #expect(grammar.jsgf.contains("public <command> = "))
    }

    @Test("Every example of the real workspaces is in the grammar's language", arguments: workspaces)
    func examplesAreAccepted(url: URL) throws {
        let workspace = try Workspace.load(from: url)
        let grammar = SpeechGrammar(workspace: workspace)
        var missing: [String] = []
        for intent in workspace.intents { for example in intent.examples where !SpeechText.words(example.text).isEmpty && !grammar.accepts(text: example.text) { missing.append(example.text) } }
        #expect(missing.isEmpty, "\(missing.prefix(5))")
        let flatTokens = grammar.templates.reduce(0) { $0 + $1.count }
        #expect(grammar.graph.edgeCount < flatTokens)
        for word in grammar.vocabulary {
            #expect(word == word.lowercased() && !word.contains(" ") && !word.isEmpty)
        }
    }

    @Test("The trigram model is a proper distribution: each history's probabilities sum to one")
    func languageModel() throws {
        let workspace = try Workspace.load(from: Fixtures.home)
        let grammar = SpeechGrammar(workspace: workspace)
        let model = ARPALanguageModel(sentences: grammar.sentences())
        let vocabulary = grammar.vocabulary + [ARPALanguageModel.sentenceEnd]
        for history in [["<s>"], ["<s>", "turn"], ["the"], ["turn", "on"], ["what", "time"], ["hello", "there"]] {
            let total = vocabulary.reduce(0.0) { $0 + pow(10, model.log10Probability(of: $1, after: history)) }
            #expect(abs(total - 1) < 1e-3, "\(history): \(total)")
        }
        let arpa = model.arpa
        #expect(arpa.hasPrefix("\\data\\\nngram 1="))
        #expect(arpa.contains("\\3-grams:") && arpa.hasSuffix("\\end\\\n"))
        #expect(grammar.trigramModel().arpa == arpa)

        // Per word, a sentence of the workspace reads better than its words shuffled, and both far better than a word
        // the model never saw (what the second reading's fluency point tells apart: SecondReading.fluencyPoint).
        let sentence = model.log10ProbabilityPerWord(["turn", "on", "the", "light"])
        let shuffled = model.log10ProbabilityPerWord(["light", "the", "on", "turn"])
        let unseen = model.log10ProbabilityPerWord(["turn", "on", "the", "xylophone"])
        #expect(sentence > -2.0 && shuffled < -2.0, "\(sentence) \(shuffled)")
        #expect(sentence > shuffled && unseen < -19, "\(unseen)")
        let manual = ["turn", "on", "the", "light", ARPALanguageModel.sentenceEnd].enumerated().reduce(0.0) { total, item in
            total + model.log10Probability(of: item.element, after: ["<s>", "turn", "on", "the", "light"].prefix(item.offset + 1).map { $0 })
        }
        #expect(abs(sentence - manual / 5) < 1e-12)
    }
}
