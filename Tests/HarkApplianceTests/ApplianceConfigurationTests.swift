import Foundation
import HarkDevices
import HarkSpeech
import Testing
@testable import HarkAppliance

@Suite("Appliance configuration")
struct ApplianceConfigurationTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test("the commented example deploy/hark.json parses, and says the defaults")
    func example() throws {
        let url = Self.root.appendingPathComponent("deploy/hark.json")
        var parsed = try ApplianceConfiguration.load(from: url)
        // Unwrapped first: Swift 6.0.3 (Debian 13) rejects a #require nested inside an #expect.
        let workspace = try #require(parsed.workspace)
        #expect(FileManager.default.fileExists(atPath: parsed.resolve(workspace).path))
        parsed.workspace = ApplianceConfiguration().workspace
        parsed.source = nil
        #expect(parsed == ApplianceConfiguration())
    }

    @Test("the noisy-speech and moderate-noise means: a file relative to the configuration, \"none\", or absent for the shipped ones")
    func means() throws {
        let source = URL(fileURLWithPath: "/etc/hark/hark.json")
        let settings: [(key: String, value: (ApplianceConfiguration) -> String?)] = [("noisy_means", { $0.noisyMeans }), ("moderate_means", { $0.moderateMeans })]
        for (key, value) in settings {
            let file = try ApplianceConfiguration.parse(#"{ "understanding": { "\#(key)": "rooms/kitchen.means" } }"#, source: source)
            #expect(value(file).map(file.resolve)?.path == "/etc/hark/rooms/kitchen.means", "\(key)")
            #expect(try value(ApplianceConfiguration.parse(#"{ "understanding": { "\#(key)": "none" } }"#, source: source)) == "none", "\(key)")
            #expect(try value(ApplianceConfiguration.parse("{}", source: source)) == nil, "\(key)")
            #expect(throws: ConfigurationError.self) {
                try ApplianceConfiguration.parse(#"{ "understanding": { "\#(key)": 3 } }"#, source: source)
            }
        }
    }

    @Test("the judge against any English is off unless the configuration turns it on, and then the recognisers use it")
    func anyEnglish() throws {
        let source = URL(fileURLWithPath: "/etc/hark/hark.json")
        #expect(try !ApplianceConfiguration.parse("{}", source: source).anyEnglish)
        let on = try ApplianceConfiguration.parse(#"{ "understanding": { "any_english": true } }"#, source: source)
        #expect(on.anyEnglish)
        #expect(on.recognitionOptions.anyEnglish == .standard)
        #expect(ApplianceConfiguration().recognitionOptions.anyEnglish == nil)
        #expect(throws: ConfigurationError.self) {
            try ApplianceConfiguration.parse(#"{ "understanding": { "any_english": "no" } }"#, source: source)
        }
    }

    @Test("the second reading decides unless the configuration says check or off (true and false as before), and the recognisers use it")
    func secondReading() throws {
        let source = URL(fileURLWithPath: "/etc/hark/hark.json")
        #expect(try ApplianceConfiguration.parse("{}", source: source).recognitionOptions.secondReading == .decide)
        for (value, use) in [(#""decide""#, SecondReading.Use.decide), (#""check""#, .check), (#""off""#, .off), ("true", .check), ("false", .off)] {
            let parsed = try ApplianceConfiguration.parse(#"{ "understanding": { "second_reading": "# + value + " } }", source: source)
            #expect(parsed.secondReading == use && parsed.recognitionOptions.secondReading == use, "\(value)")
        }
        for bad in ["1", #""on""#, #""""#] {
            do {
                _ = try ApplianceConfiguration.parse(#"{ "understanding": { "second_reading": "# + bad + " } }", source: source)
                Issue.record("\(bad) was accepted")
            } catch {
                #expect(String(describing: error).contains("understanding.second_reading") && String(describing: error).contains("\"decide\", \"check\" or \"off\""),
                        "\(error)")
            }
        }
    }

    @Test("the values' margin is on unless the configuration turns it off")
    func valuesMargin() throws {
        let source = URL(fileURLWithPath: "/etc/hark/hark.json")
        #expect(try ApplianceConfiguration.parse("{}", source: source).recognitionOptions.valuesMarginPoint == RecognitionOptions.standardValuesMarginPoint)
        let off = try ApplianceConfiguration.parse(#"{ "understanding": { "values_margin": false } }"#, source: source)
        #expect(!off.valuesMargin && off.recognitionOptions.valuesMarginPoint == nil)
        #expect(throws: ConfigurationError.self) {
            try ApplianceConfiguration.parse(#"{ "understanding": { "values_margin": -4 } }"#, source: source)
        }
    }

    @Test("the courtesy words are on unless the configuration turns them off")
    func courtesyWords() throws {
        let source = URL(fileURLWithPath: "/etc/hark/hark.json")
        #expect(try ApplianceConfiguration.parse("{}", source: source).recognitionOptions.courtesyWords)
        let off = try ApplianceConfiguration.parse(#"{ "understanding": { "courtesy_words": false } }"#, source: source)
        #expect(!off.courtesyWords && !off.recognitionOptions.courtesyWords)
        #expect(throws: ConfigurationError.self) {
            try ApplianceConfiguration.parse(#"{ "understanding": { "courtesy_words": "yes" } }"#, source: source)
        }
    }

    @Test("an empty object is the defaults")
    func empty() throws {
        #expect(try ApplianceConfiguration.parse("{}", source: nil) == ApplianceConfiguration())
    }

    @Test("fields are read, lines by offset or by name")
    func fields() throws {
        let c = try ApplianceConfiguration.parse("""
            { "simulate": true, "audio": { "trailing_silence": 1.2, "earcon": false, "voicing": false },
              "gpio": { "chip": "gpiochip1", "outputs": { "light": { "line": "LAMP", "active_low": true } },
                        "button": { "line": 5, "mode": "press", "debounce_ms": 50 } },
              "camera": { "width": 320, "height": 240, "keep": 3 } }
            """, source: URL(fileURLWithPath: "/etc/hark/hark.json"))
        #expect(c.simulate == .always)
        #expect(c.trailingSilence == 1.2 && !c.earcon && !c.voicing)
        // The endpointer the appliance builds from it: the same limits, the voicing rule off.
        #expect(c.endpointing.trailingSilence == 1.2 && c.endpointing.voicedHold == 0)
        #expect(ApplianceConfiguration().endpointing.voicedHold > 0)
        #expect(c.chip == "gpiochip1")
        #expect(c.outputs.keys.sorted() == ["light"])
        #expect(c.outputs["light"]?.line == .name("LAMP"))
        #expect(c.outputs["light"]?.activeLow == true)
        #expect(c.outputs["light"]?.contextVariable == "light_state")
        #expect(c.button?.line == .offset(5) && c.button?.mode == .press && c.button?.debounce == .milliseconds(50))
        #expect(c.cameraWidth == 320 && c.keepPictures == 3)
        #expect(c.workspace == nil)
        #expect(c.resolve("home.json").path == "/etc/hark/home.json")
        let rooms = try ApplianceConfiguration.parse(#"{"rooms": {"name": " Kitchen Hark ", "join": "Kitchen", "echo_cancellation": false, "wake": false}}"#, source: nil)
        #expect(rooms.roomName == "Kitchen Hark" && rooms.roomJoin == "Kitchen" && !rooms.roomEchoCancellation && !rooms.roomWake)
        #expect(try ApplianceConfiguration.parse("{}", source: nil).roomWake)
        let server = try ApplianceConfiguration.parse(#"{"server": {"host_names": ["hark.home.arpa", "kitchen.lan"]}}"#, source: nil)
        #expect(server.serverHostNames == ["hark.home.arpa", "kitchen.lan"])
        #expect(server.serverConnectionsPerClient == 32)
        #expect(try ApplianceConfiguration.parse(#"{"server": {"connections_per_client": 100}}"#, source: nil).serverConnectionsPerClient == 100)
    }

    @Test("errors name the file and the field", arguments: [
        (#"{"audio": {"trailing_silense": 1}}"#, "audio.trailing_silense: unknown field"),
        (#"{"audio": {"trailing_silence": "long"}}"#, "audio.trailing_silence: expected a number"),
        (#"{"audio": {"trailing_silence": 99}}"#, "audio.trailing_silence: 99 is out of range"),
        (#"{"audio": {"voicing": "yes"}}"#, "audio.voicing: expected"),
        (#"{"gpio": {"outputs": {"light": {"active_low": true}}}}"#, "gpio.outputs.light.line: missing"),
        (#"{"gpio": {"outputs": {"light": {"line": -3}}}}"#, "gpio.outputs.light.line: expected a line offset"),
        (#"{"gpio": {"button": {"line": 4, "mode": "tap"}}}"#, "gpio.button.mode: expected \"hold\""),
        (#"{"simulate": "sometimes"}"#, "simulate: expected \"auto\""),
        (#"{"camera": {"width": 10.5}}"#, "camera.width: expected a whole number"),
        (#"{"server": {"host_names": "hark.lan"}}"#, "server.host_names: expected a list of host names"),
        (#"{"server": {"host_names": ["hark.lan", 7]}}"#, "server.host_names[1]: expected a non-empty string"),
        (#"{"server": {"connections_per_client": 0}}"#, "server.connections_per_client: 0 is out of range 1…128"),
        (#"{"server": {"connections_per_client": 129}}"#, "server.connections_per_client: 129 is out of range 1…128"),
        (#"{"rooms": {"join": "   "}}"#, "rooms.join: must not be empty"),
        (#"{"rooms": {"join": 7}}"#, "rooms.join: expected a non-empty string"),
        // 65 characters written out: an interpolation inside @Test's arguments crashes Debian 13's Swift 6.0.3.
        (#"{"rooms": {"name": "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}}"#, "rooms.name: is 65 characters; at most 64"),
        (#"{"rooms": {"join": "Kitchen\u0007"}}"#, "rooms.join: must not contain control characters"),
        (#"{"rooms": {"joins": "Kitchen"}}"#, "rooms.joins: unknown field"),
        (#"{"rooms": {"wake": "yes"}}"#, "rooms.wake: expected true or false"),
        (#"[1, 2]"#, "the top level must be a JSON object"),
        ("{\n  \"workspace\": \"a.json\",\n  oops\n}", "line 3"),
    ])
    func errors(text: String, expected: String) {
        #expect {
            _ = try ApplianceConfiguration.parse(text, source: URL(fileURLWithPath: "/etc/hark/hark.json"))
        } throws: { error in
            let message = "\(error)"
            return message.hasPrefix("/etc/hark/hark.json: ") && message.contains(expected)
        }
    }

    @Test("comments are stripped outside strings only")
    func comments() throws {
        let c = try ApplianceConfiguration.parse("""
            // heading
            { "workspace": "http://x//y.json", // trailing
              "voice": { "name": "en-us" } }
            """, source: nil)
        #expect(c.workspace == "http://x//y.json")
    }

    @Test("a missing file is named")
    func missingFile() {
        #expect {
            _ = try ApplianceConfiguration.load(from: URL(fileURLWithPath: "/nonexistent/hark.json"))
        } throws: { "\($0)".contains("/nonexistent/hark.json") }
    }
}
