import Foundation
import Testing

@testable import HarkSpeech

@Suite("Wake settings")
struct WakeSettingsTests {
    static let shipped = RecognitionFixtures.packageRoot.appendingPathComponent("Models/wake.json")

    static func decode(_ json: String) throws(WakeSettingsError) -> WakeSettings {
        try WakeSettings.decode(Data(json.utf8), source: "test.json")
    }

    @Test("Models/wake.json loads, and its phrase has words the spotter can use")
    func shippedFileLoads() throws {
        let settings = try WakeSettings.load(from: Self.shipped)
        #expect(!WakePhraseSpotter.words(of: settings.phrase).isEmpty)
        #expect(settings.keyphraseThreshold > 0 && settings.keyphraseThreshold <= 1)
    }

    @Test("Every field is optional: an empty object is the defaults, comments are allowed")
    func defaults() throws {
        #expect(try Self.decode("{}") == WakeSettings())
        #expect(try Self.decode(#"{"_comment": "anything", "_note": [1, 2]}"#) == WakeSettings())
        let partial = try Self.decode(#"{"phrase": "okay hark", "confirm": false}"#)
        #expect(partial.phrase == "okay hark" && !partial.confirms)
        #expect(partial.keyphraseThreshold == WakeSettings().keyphraseThreshold)
        #expect(partial.keyphraseBeam == 1e-48, "PocketSphinx's own default, what the spotter always used")
    }

    @Test("Settings survive encoding and decoding")
    func roundTrip() throws {
        let settings = WakeSettings(phrase: "hello hark", keyphraseThreshold: 1e-25, keyphraseBeam: 1e-70, settleSeconds: 0.2, confirms: false,
                                    confirmationThreshold: -2, preRollSeconds: 0.5, maximumPhraseSeconds: 2, noisyMeans: true,
                                    verifier: "v.json", verifierThreshold: 0.25)
        #expect(try WakeSettings.decode(JSONEncoder().encode(settings)) == settings)
        #expect(try WakeSettings.decode(JSONEncoder().encode(WakeSettings())) == WakeSettings())
        #expect(try Self.decode(#"{"verifier": null}"#).verifier == nil)
    }

    @Test("A field of the wrong type or out of range is an error naming the field", arguments: [
        (#"{"kws_threshold": "loud"}"#, "kws_threshold"),
        (#"{"kws_threshold": 2}"#, "kws_threshold"),
        (#"{"kws_threshold": 0}"#, "kws_threshold"),
        (#"{"kws_beam": 1}"#, "kws_beam"),
        (#"{"kws_beam": -1e-48}"#, "kws_beam"),
        (#"{"confirmation_threshold": null}"#, "confirmation_threshold"),
        (#"{"confirm": "yes"}"#, "confirm"),
        (#"{"pre_roll_seconds": -1}"#, "pre_roll_seconds"),
        (#"{"settle_seconds": 3}"#, "settle_seconds"),
        (#"{"maximum_phrase_seconds": [1]}"#, "maximum_phrase_seconds"),
        (#"{"phrase": " , ! "}"#, "phrase"),
        (#"{"phrase": 7}"#, "phrase"),
        (#"{"noisy_means": "yes"}"#, "noisy_means"),
        (#"{"verifier": ""}"#, "verifier"),
        (#"{"verifier": 3}"#, "verifier"),
        (#"{"verifier_threshold": 1.5}"#, "verifier_threshold"),
        (#"{"verifier_threshold": "high"}"#, "verifier_threshold"),
    ])
    func badField(json: String, field: String) {
        do {
            _ = try Self.decode(json)
            Issue.record("\(json) was accepted")
        } catch let error {
            guard case let .invalidField(source, name, _, _) = error else {
                Issue.record("\(json): \(error)")
                return
            }
            #expect(name == field && source == "test.json")
            #expect(error.description.contains("'\(field)'"))
        }
    }

    @Test("noisy_means with a model that has no noisy-speech means is an error that says so")
    func noisyMeansNeedTheFile() throws {
        var model = SpeechModel()
        model.noisyMeans = nil
        #expect(throws: WakeError.noNoisyMeans) {
            try WakePhraseSpotter(phrase: "hey hark", model: model, settings: WakeSettings(noisyMeans: true))
        }
        #expect(WakeError.noNoisyMeans.description.contains("noisy_means"))
    }

    @Test("An unknown field is an error naming it, not a silently ignored setting")
    func unknownField() {
        #expect(throws: WakeSettingsError.unknownField(source: "test.json", field: "kws_treshold",
                                                       known: WakeSettings.CodingKeys.allCases.map(\.stringValue))) {
            try Self.decode(#"{"kws_treshold": 1e-20}"#)
        }
    }

    @Test("Not JSON, not an object, or no file: errors naming the source")
    func malformed() {
        for json in ["{", "[1, 2]", "\"hey hark\""] {
            do {
                _ = try Self.decode(json)
                Issue.record("\(json) was accepted")
            } catch {
                guard case let .malformed(source, _) = error else {
                    Issue.record("\(json): \(error)")
                    continue
                }
                #expect(source == "test.json")
            }
        }
        let missing = URL(fileURLWithPath: "/nonexistent/wake.json")
        do {
            _ = try WakeSettings.load(from: missing)
            Issue.record("a missing file was accepted")
        } catch {
            guard case let .unreadable(path, _) = error else {
                Issue.record("\(error)")
                return
            }
            #expect(path == missing.path)
        }
    }
}
