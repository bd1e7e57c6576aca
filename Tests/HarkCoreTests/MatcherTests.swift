import Foundation
import Testing
@testable import HarkCore

@Suite struct MatcherTests {
    static let home: Matcher = Matcher(workspace: try! Workspace.load(from: Fixtures.home))
    static let now = Date(timeIntervalSince1970: 1_795_000_000)

    /// Sentences that are not examples in home.json: the intent the dialog should see (>= 0.2).
    @Test(arguments: [
        ("could you switch the lamp on for me", "OnLight"),
        ("lights on please", "OnLight"),
        ("please kill the lights", "OffLight"),
        ("turn the lamp off", "OffLight"),
        ("is the lamp still on", "LightStatus"),
        ("snap a picture of the room", "TakePicture"),
        ("hey there", "Greetings"),
        ("what time is it now", "Time"),
        ("what can you do for me", "Help"),
        ("thanks a lot", "Thanks"),
        ("see you later", "Goodbye"),
        ("drop in on the living room please", "DropIn"),
        ("could you connect me with the garage", "DropIn"),
        ("please hang up the intercom", "HangUp"),
        ("leave the kitchen room now", "HangUp"),
    ])
    func homeIntents(text: String, intent: String) {
        let u = Self.home.understand(text, now: Self.now)
        #expect(u.intents.first?.intent == intent, "\(text): \(u.intents.prefix(3))")
        #expect((u.intents.first?.confidence ?? 0) >= Understanding.reportingThreshold, "\(text): \(u.intents.prefix(3))")
    }

    /// Out-of-scope sentences must not reach the 0.2 threshold of any intent.
    @Test(arguments: [
        "what's the weather like in Lisbon tomorrow",
        "order a large pepperoni pizza",
        "who won the football match yesterday",
        "asdf qwerty zxcv",
        "book me a flight to Chicago",
        "",
    ])
    func outOfScopeIsRejected(text: String) {
        let u = Self.home.understand(text, now: Self.now)
        #expect(u.reportedIntents(alternates: false).isEmpty, "\(text): \(u.intents.prefix(3))")
    }

    @Test func confidencesAreProbabilitiesAndSorted() {
        let u = Self.home.understand("turn on the light", now: Self.now)
        #expect(u.intents.count == Self.home.workspace.intents.count)
        #expect(u.intents.allSatisfy { (0...1).contains($0.confidence) })
        #expect(zip(u.intents, u.intents.dropFirst()).allSatisfy { $0.confidence >= $1.confidence })
        // Watson reports at most ten alternates.
        #expect(u.reportedIntents(alternates: true).count == 10)
    }

    @Test func exactExampleGetsTheBoost() throws {
        let ws = try Workspace.load(from: Fixtures.home)
        let example = ws.intents.first { $0.name == "TakePicture" }!.examples[0].text
        let u = Self.home.understand(example, now: Self.now)
        #expect(u.intents[0].intent == "TakePicture")
        #expect(u.intents[0].confidence >= 0.99)
        #expect(Self.home.explain(example, now: Self.now).exactMatch == "TakePicture")
    }

    @Test func counterexampleIsSuppressed() throws {
        let ws = try Workspace.parse(
            #"{"intents":[{"intent":"on","examples":[{"text":"turn on the light"},{"text":"switch the light on"}]},{"intent":"off","examples":[{"text":"turn off the light"}]}],"counterexamples":[{"text":"turn on the radio"}]}"#)
        let m = Matcher(workspace: ws)
        #expect(m.understand("turn on the radio").reportedIntents(alternates: false).isEmpty)
        #expect(m.explain("turn on the radio").counterexampleMatch)
        #expect(m.understand("turn on the light").intents[0].intent == "on")
    }

    @Test func entitiesCarryLocationValueAndLiteral() {
        let u = Self.home.understand("Turn on the ceiling light at 7 pm", now: Self.now)
        let device = u.entities.first { $0.entity == "device" }
        #expect(device?.value == "light")
        #expect(device?.literal == "ceiling light")
        #expect(device.map { [$0.start, $0.end] } == [12, 25])
        let time = u.entities.first { $0.entity == "sys-time" }
        #expect(time?.value == "19:00:00")
    }

    @Test func explanationNamesTheDecidingFeatures() {
        let e = Self.home.explain("please take a photo", now: Self.now)
        #expect(e.understanding.intents[0].intent == "TakePicture")
        #expect(e.features.contains { $0.name == "w:photo" })
        #expect(e.classifierProbabilities["TakePicture"] != nil)
        let oos = Self.home.explain("what is the capital of mongolia", now: Self.now)
        #expect(oos.unknownWords.contains("mongolia"))
        #expect(oos.calibratedConfidence < 0.2)
        #expect(oos.evidence.unknownCommon + oos.evidence.unknownRare >= 2)
        #expect(oos.classifierProbabilities.max { $0.value < $1.value }?.key == "#irrelevant")
        #expect(oos.understanding.reportedIntents(alternates: false).isEmpty)
    }

    @Test func trainingIsDeterministic() throws {
        let ws = try Workspace.load(from: Fixtures.home)
        let a = Matcher(workspace: ws).understand("lamp on", now: Self.now)
        let b = Matcher(workspace: ws).understand("lamp on", now: Self.now)
        #expect(a.intents == b.intents)
    }
}

@Suite struct EntityExtractorTests {
    static let workspace = try! Workspace.parse(
        #"""
        {"intents":[{"intent":"go","examples":[{"text":"navigate to the restaurant"}]}],
         "entities":[
           {"entity":"amenity","fuzzy_match":true,"values":[{"value":"restaurant","synonyms":["diner","place to eat"]},{"value":"gas","synonyms":["gas station","petrol"]}]},
           {"entity":"cuisine","values":[{"value":"thai","synonyms":[]}]},
           {"entity":"zip","values":[{"type":"patterns","value":"zip","patterns":["\\b\\d{5}\\b"]}]},
           {"entity":"sys-number","values":[]}
         ]}
        """#)
    static let extractor = EntityExtractor(workspace: workspace)

    static func extract(_ text: String) -> [EntityMatch] {
        extractor.extract(from: text, tokens: Tokenizer.tokenize(text), now: Date(timeIntervalSince1970: 0), timeZone: TimeZone(identifier: "UTC")!)
    }

    @Test(arguments: [
        ("find a place to eat", "amenity", "restaurant", 7, 19, 1.0),
        ("nearest gas station please", "amenity", "gas", 8, 19, 1.0),
        ("take me to a resturant", "amenity", "restaurant", 13, 22, 0.8),
        ("any diners nearby", "amenity", "restaurant", 4, 10, 0.9),
        ("Thai food", "cuisine", "thai", 0, 4, 1.0),
        ("ship it to 90210 now", "zip", "zip", 11, 16, 1.0),
    ])
    func finds(text: String, entity: String, value: String, start: Int, end: Int, confidence: Double) {
        let found = Self.extract(text).first { $0.entity == entity }
        #expect(found?.value == value, "\(text): \(Self.extract(text))")
        #expect(found.map { [$0.start, $0.end] } == [start, end])
        #expect(found?.confidence == confidence)
    }

    @Test func fuzzyMatchingIsOnlyForFuzzyEntitiesAndUnknownWords() {
        #expect(!Self.extract("thia food").contains { $0.entity == "cuisine" })
        // "navigate" is a workspace word: it is never re-read as something else.
        #expect(Self.extract("navigate").isEmpty)
    }

    @Test func aValueInsideALongerValueOfAnotherEntityIsNotReadTwice() throws {
        let ws = try Workspace.parse(
            #"""
            {"intents":[{"intent":"order","examples":[{"text":"a medium latte"}]}],
             "entities":[
               {"entity":"size","values":[{"value":"medium"},{"value":"large"}]},
               {"entity":"roast","values":[{"value":"medium roast"},{"value":"dark roast"}]}
             ]}
            """#)
        let extractor = EntityExtractor(workspace: ws)
        func found(_ text: String) -> [String] {
            extractor.extract(from: text, tokens: Tokenizer.tokenize(text)).map { "\($0.entity):\($0.value)" }
        }
        #expect(found("a medium roast large latte") == ["roast:medium roast", "size:large"])
        #expect(found("a medium medium roast latte") == ["size:medium", "roast:medium roast"])
        #expect(found("a medium latte") == ["size:medium"])
    }

    @Test func offsetsCountUnicodeScalars() {
        let found = Self.extract("😀 find a diner").first { $0.entity == "amenity" }
        #expect(found.map { [$0.start, $0.end] } == [9, 14])
        #expect(found?.literal == "diner")
    }
}
