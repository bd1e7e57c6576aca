import Foundation
import HarkAudio
import HarkCore
import HarkDevices
import HarkSpeech

/// Everything `hark run` can be told, from one JSON file (`//` comments allowed). Every field has a default,
/// so an empty file — or no file — is a working configuration. `deploy/hark.json` is the commented example;
/// `docs/appliance.md` documents each field.
///
/// Relative paths in the file resolve against the file's own directory (so `/etc/hark/hark.json` can say
/// `"workspace": "home.json"`); without a file they resolve against the current directory.
public struct ApplianceConfiguration: Sendable, Equatable {
    /// Whether to use simulated GPIO and camera.
    public enum Simulation: String, Sendable, Equatable {
        /// Real devices where they exist; a simulated twin, announced in the log, where they do not.
        case auto
        /// Always simulated (tests, demos).
        case always
        /// Real devices only: a missing chip or camera is an error.
        case never
    }

    /// How the push-to-talk button starts and ends a turn.
    public enum ButtonMode: String, Sendable, Equatable {
        /// Listen while the button is held; releasing it ends the utterance.
        case hold
        /// A press starts listening; the endpointer ends the utterance.
        case press
    }

    public struct Output: Sendable, Equatable {
        public var line: GPIOLineSelector
        public var activeLow = false
        public var initial = false
        /// The context variable that carries the line's state into every dialog turn (`light_state`).
        public var contextVariable: String
    }

    public struct Button: Sendable, Equatable {
        public var line: GPIOLineSelector
        public var activeLow = true
        public var debounce: Duration = .milliseconds(30)
        public var mode = ButtonMode.hold
    }

    // MARK: fields (defaults are the documented ones)

    /// The intent workspace (Watson Assistant v1 JSON); nil = the shipped `Intents/home.json`.
    public var workspace: String?
    /// Where the event store and pictures live; nil = `DataDirectory.default`.
    public var dataDirectory: String?
    public var simulate = Simulation.auto

    /// ALSA device names for the microphone and the speaker, and an optional ALSA configuration file.
    public var captureDevice = "default"
    public var playbackDevice = "default"
    public var alsaConfig: String?
    /// Silence that ends an utterance, and the longest utterance, in seconds.
    public var trailingSilence = 0.8
    public var maximumUtterance = 10.0
    /// How long to wait for speech to start after a trigger (or a slot prompt), in seconds.
    public var listenTimeout = 6.0
    /// A short two-tone beep when listening starts.
    public var earcon = true
    /// The endpointer's voicing rule (`Endpointer.Configuration.voicedHold`): loud audio without a voice's pitch
    /// does not keep a voiced utterance going, so a turn ends in a kitchen's clatter; false: the level alone.
    public var voicing = true
    /// Voiced audio an utterance needs, in seconds (`Endpointer.Configuration.minimumVoiced`): one with less (a
    /// knock, a clatter), or whose pitch holds (a chime), is dismissed and the microphone goes on listening; 0 keeps
    /// every utterance (whispers).
    public var minimumVoiced = Endpointer.Configuration().minimumVoiced

    /// The endpointer's settings for the microphone's turns (and the rooms' wake phrase).
    public var endpointing: Endpointer.Configuration {
        var endpointing = Endpointer.Configuration()
        endpointing.trailingSilence = trailingSilence
        endpointing.maximumLength = maximumUtterance
        if !voicing { endpointing.voicedHold = 0 }
        endpointing.minimumVoiced = minimumVoiced
        return endpointing
    }

    /// eSpeak NG voice, words per minute, pitch 0–100, volume 0–200.
    public var voice = SpeechSynthesizer.defaultVoice
    public var rate = SpeechSynthesizer.defaultRate
    public var pitch = SpeechSynthesizer.defaultPitch
    public var volume = SpeechSynthesizer.defaultVolume

    /// Wake phrase: on or off, and an optional settings file overriding `Models/wake.json`.
    public var wakeEnabled = true
    public var wakeSettings: String?

    /// Acoustic model directory (nil = Debian's en-us); thresholds a spoken command must reach to be acted on.
    public var acousticModel: String?
    /// Gaussian means for utterances decoded as noisy: a file, "none" for the acoustic model's own, or nil for
    /// the shipped `Models/en-us-noisy.means` (with the stock acoustic model).
    public var noisyMeans: String?
    /// Gaussian means for utterances in moderate noise, the same way (nil: the shipped `Models/en-us-moderate.means`).
    public var moderateMeans: String?
    /// Whether a clean utterance the acoustic point accepts is also judged against any English
    /// (`RecognitionOptions.anyEnglish`): off by default, since it costs about 100 MiB, two to three times the
    /// decoding's processor time and a later answer to long commands.
    public var anyEnglish = false
    /// How clean and moderately noisy speech is also read with the workspace's words in any order
    /// (`RecognitionOptions.secondReading`): `"decide"` by default (a reading sure of its words and their intent answers;
    /// in clean speech one that is not can stop the grammar's sentence), `"check"` (it can only stop it) or `"off"`;
    /// `true` and `false` mean `"check"` and `"off"`, as before the reading could decide. About 1.7 times the processor
    /// time of a command (docs/speech.md, "A second reading decides").
    public var secondReading = SecondReading.Use.decide
    /// Whether the words of a command's values must fit the sound in clean speech (`RecognitionOptions.valuesMarginPoint`;
    /// on by default: docs/speech.md, "Near-commands: the values must fit").
    public var valuesMargin = true
    /// Whether clean speech may wrap a command in courtesy words ("could you … please") and still be heard as that
    /// command (`RecognitionOptions.courtesyWords`; on by default: docs/speech.md, "Courtesy words").
    public var courtesyWords = true

    /// How the appliance's recognisers search: the defaults, with the judge against any English when `anyEnglish`, the
    /// second reading when `secondReading`, the values' margin when `valuesMargin` and the courtesy words when
    /// `courtesyWords`.
    public var recognitionOptions: RecognitionOptions {
        RecognitionOptions(anyEnglish: anyEnglish ? .standard : nil, secondReading: secondReading, courtesyWords: courtesyWords,
                           valuesMarginPoint: valuesMargin ? RecognitionOptions.standardValuesMarginPoint : nil)
    }
    public var acousticThreshold = SpeechUnderstanding.defaultAcousticThreshold
    public var intentThreshold = Understanding.reportingThreshold

    /// The GPIO chip (name, path, number or label) and the named lines on it; nil = the 40-pin header's chip,
    /// found by its label (`GPIOChips.headerChip`), since its number differs between boards and kernels.
    public var chip: String?
    public var outputs: [String: Output] = [
        "light": Output(line: .offset(17), contextVariable: "light_state"),
        "led": Output(line: .offset(27), contextVariable: "led_state"),
    ]
    /// The push-to-talk button; nil = none.
    public var button: Button? = Button(line: .offset(22))

    /// The V4L2 camera and its pictures.
    public var cameraDevice = "/dev/video0"
    public var cameraWidth = 640
    public var cameraHeight = 480
    public var jpegQuality = 85
    /// Pictures kept on disk; the oldest beyond this are deleted.
    public var keepPictures = 200

    /// The companion server (docs/server-api.md): on by default inside `hark run`, on loopback only.
    public var serverEnabled = true
    /// The address to listen on; `lan: true` means all interfaces (0.0.0.0) and HTTPS.
    public var serverHost = "127.0.0.1"
    public var serverPort = 8080
    public var serverLAN = false
    /// More names browsers may use for the server (a DNS name, a reverse proxy's), besides the machine's own
    /// host name, addresses and localhost: `Host` and `Origin` naming anything else are refused.
    public var serverHostNames: [String] = []
    /// Connections one client (an IPv4 address, an IPv6 /64) may hold (`ServerConfiguration.maxConnectionsPerAddress`):
    /// a host on the LAN cannot take every connection. Behind a reverse proxy on the same machine every browser
    /// is that one address, so such a setup raises it (at most 128, the server's total).
    public var serverConnectionsPerClient = 32
    /// The user's own certificate and key (PEM); nil = a self-signed pair generated on first run and kept.
    public var certificate: String?
    public var certificateKey: String?

    /// The appliance as a member of the drop-in rooms (docs/rooms.md, "The appliance in a room"): the name
    /// members see (nil = the machine's host name), the room it joins at start (nil = none; made when no open
    /// room has that name), and whether its microphone goes through the echo canceller.
    public var roomName: String?
    public var roomJoin: String?
    public var roomEchoCancellation = true
    /// Whether the wake phrase is listened for in the rooms' members' streams (docs/rooms.md, "The wake phrase in
    /// a room"): a member who says it is answered in the room.
    public var roomWake = true
    /// Another appliance's server whose rooms this one joins instead of its own (`http(s)://HOST:PORT`, linked
    /// with `hark link`); nil = its own server's rooms.
    public var roomServer: String?

    /// Home Assistant's Wyoming services beside the loop, at this `tcp://HOST:PORT` (docs/wyoming.md); nil = off.
    public var wyoming: String?

    /// The file this came from, for messages and relative paths; nil for the defaults.
    public var source: URL?

    public init() {}

    /// `audio.alsa_config` resolved to a path, for `ALSACapture`/`ALSAPlayback`'s `configFile`.
    public var alsaConfigFile: String? { alsaConfig.map { resolve($0).path } }

    /// The names of the configured devices, as dialog actions use them.
    public var deviceNames: [String] { outputs.keys.sorted() + [DeviceSet.cameraName] }

    /// `path` resolved against the configuration file's directory (or the current directory).
    public func resolve(_ path: String) -> URL {
        if path.hasPrefix("/") { return URL(fileURLWithPath: path) }
        if path.hasPrefix("~/") {
            return DataDirectory.home(environment: ProcessInfo.processInfo.environment).appendingPathComponent(String(path.dropFirst(2)))
        }
        let base = source?.deletingLastPathComponent() ?? URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
        return base.appendingPathComponent(path).standardizedFileURL
    }
}

/// A configuration file that cannot be used: the message names the file, the field and what is wrong.
public struct ConfigurationError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

extension ApplianceConfiguration {
    /// Reads `url`: JSON with `//` line comments; unknown fields are errors (a typo must not silently become a
    /// default), except names starting with `_`, which are comments.
    public static func load(from url: URL) throws(ConfigurationError) -> ApplianceConfiguration {
        let data: Data
        do { data = try Data(contentsOf: url) } catch {
            throw ConfigurationError("\(url.path): cannot read the configuration file (\((error as NSError).localizedDescription))")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw ConfigurationError("\(url.path): not UTF-8 text")
        }
        return try parse(text, source: url)
    }

    /// Parses configuration text; `source` names it in errors and anchors relative paths.
    public static func parse(_ text: String, source: URL?) throws(ConfigurationError) -> ApplianceConfiguration {
        let name = source?.path ?? "configuration"
        let root: JSONValue
        do { root = try JSONValue.parse(strippingComments(text)) } catch {
            throw ConfigurationError("\(name): \(error)")
        }
        guard let object = root.objectValue else { throw ConfigurationError("\(name): the top level must be a JSON object") }
        let reader = FieldReader(file: name)
        var c = ApplianceConfiguration()
        c.source = source
        try reader.read(object, path: "", known: [
            "workspace": { v, p throws(ConfigurationError) in c.workspace = try reader.optionalString(v, p) },
            "data_directory": { v, p throws(ConfigurationError) in c.dataDirectory = try reader.optionalString(v, p) },
            "simulate": { v, p throws(ConfigurationError) in c.simulate = try reader.simulation(v, p) },
            "audio": { v, p throws(ConfigurationError) in
                try reader.read(try reader.object(v, p), path: p, known: [
                    "capture": { v, p throws(ConfigurationError) in c.captureDevice = try reader.string(v, p) },
                    "playback": { v, p throws(ConfigurationError) in c.playbackDevice = try reader.string(v, p) },
                    "alsa_config": { v, p throws(ConfigurationError) in c.alsaConfig = try reader.optionalString(v, p) },
                    "trailing_silence": { v, p throws(ConfigurationError) in c.trailingSilence = try reader.number(v, p, in: 0.1...5) },
                    "max_utterance": { v, p throws(ConfigurationError) in c.maximumUtterance = try reader.number(v, p, in: 1...60) },
                    "listen_timeout": { v, p throws(ConfigurationError) in c.listenTimeout = try reader.number(v, p, in: 1...120) },
                    "earcon": { v, p throws(ConfigurationError) in c.earcon = try reader.bool(v, p) },
                    "voicing": { v, p throws(ConfigurationError) in c.voicing = try reader.bool(v, p) },
                    "minimum_voiced": { v, p throws(ConfigurationError) in c.minimumVoiced = try reader.number(v, p, in: 0...2) },
                ])
            },
            "voice": { v, p throws(ConfigurationError) in
                try reader.read(try reader.object(v, p), path: p, known: [
                    "name": { v, p throws(ConfigurationError) in c.voice = try reader.string(v, p) },
                    "rate": { v, p throws(ConfigurationError) in c.rate = try reader.integer(v, p, in: 80...450) },
                    "pitch": { v, p throws(ConfigurationError) in c.pitch = try reader.integer(v, p, in: 0...100) },
                    "volume": { v, p throws(ConfigurationError) in c.volume = try reader.integer(v, p, in: 0...200) },
                ])
            },
            "wake": { v, p throws(ConfigurationError) in
                try reader.read(try reader.object(v, p), path: p, known: [
                    "enabled": { v, p throws(ConfigurationError) in c.wakeEnabled = try reader.bool(v, p) },
                    "settings": { v, p throws(ConfigurationError) in c.wakeSettings = try reader.optionalString(v, p) },
                ])
            },
            "understanding": { v, p throws(ConfigurationError) in
                try reader.read(try reader.object(v, p), path: p, known: [
                    "acoustic_model": { v, p throws(ConfigurationError) in c.acousticModel = try reader.optionalString(v, p) },
                    "noisy_means": { v, p throws(ConfigurationError) in c.noisyMeans = try reader.optionalString(v, p) },
                    "moderate_means": { v, p throws(ConfigurationError) in c.moderateMeans = try reader.optionalString(v, p) },
                    "any_english": { v, p throws(ConfigurationError) in c.anyEnglish = try reader.bool(v, p) },
                    "second_reading": { v, p throws(ConfigurationError) in c.secondReading = try reader.secondReading(v, p) },
                    "values_margin": { v, p throws(ConfigurationError) in c.valuesMargin = try reader.bool(v, p) },
                    "courtesy_words": { v, p throws(ConfigurationError) in c.courtesyWords = try reader.bool(v, p) },
                    "acoustic_threshold": { v, p throws(ConfigurationError) in c.acousticThreshold = try reader.number(v, p, in: 0...1) },
                    "intent_threshold": { v, p throws(ConfigurationError) in c.intentThreshold = try reader.number(v, p, in: 0...1) },
                ])
            },
            "gpio": { v, p throws(ConfigurationError) in
                try reader.read(try reader.object(v, p), path: p, known: [
                    "chip": { v, p throws(ConfigurationError) in c.chip = try reader.string(v, p) },
                    "outputs": { v, p throws(ConfigurationError) in
                        var outputs: [String: Output] = [:]
                        let o = try reader.object(v, p)
                        for key in o.keys where !key.hasPrefix("_") {
                            guard let value = o[key] else { continue }
                            outputs[key] = try reader.output(value, "\(p).\(key)", name: key)
                        }
                        if outputs[DeviceSet.cameraName] != nil { throw ConfigurationError("\(name): \(p).camera: the name camera is the camera's; pick another output name") }
                        c.outputs = outputs
                    },
                    "button": { v, p throws(ConfigurationError) in c.button = v.isNull ? nil : try reader.button(v, p) },
                ])
            },
            "server": { v, p throws(ConfigurationError) in
                try reader.read(try reader.object(v, p), path: p, known: [
                    "enabled": { v, p throws(ConfigurationError) in c.serverEnabled = try reader.bool(v, p) },
                    "host": { v, p throws(ConfigurationError) in c.serverHost = try reader.string(v, p) },
                    "port": { v, p throws(ConfigurationError) in c.serverPort = try reader.integer(v, p, in: 0...65_535) },
                    "lan": { v, p throws(ConfigurationError) in c.serverLAN = try reader.bool(v, p) },
                    "host_names": { v, p throws(ConfigurationError) in
                        guard let items = v.arrayValue else { throw reader.fail(p, "expected a list of host names, e.g. [\"hark.home.arpa\"]") }
                        var names: [String] = []
                        for (i, item) in items.enumerated() { names.append(try reader.string(item, "\(p)[\(i)]")) }
                        c.serverHostNames = names
                    },
                    "connections_per_client": { v, p throws(ConfigurationError) in
                        c.serverConnectionsPerClient = try reader.integer(v, p, in: 1...128)
                    },
                    "certificate": { v, p throws(ConfigurationError) in c.certificate = try reader.optionalString(v, p) },
                    "key": { v, p throws(ConfigurationError) in c.certificateKey = try reader.optionalString(v, p) },
                ])
            },
            "wyoming": { v, p throws(ConfigurationError) in c.wyoming = try reader.optionalString(v, p) },
            "rooms": { v, p throws(ConfigurationError) in
                try reader.read(try reader.object(v, p), path: p, known: [
                    "name": { v, p throws(ConfigurationError) in c.roomName = try reader.optionalName(v, p, maximum: 64) },
                    "join": { v, p throws(ConfigurationError) in c.roomJoin = try reader.optionalName(v, p, maximum: 100) },
                    "echo_cancellation": { v, p throws(ConfigurationError) in c.roomEchoCancellation = try reader.bool(v, p) },
                    "wake": { v, p throws(ConfigurationError) in c.roomWake = try reader.bool(v, p) },
                    "server": { v, p throws(ConfigurationError) in c.roomServer = try reader.optionalString(v, p) },
                ])
            },
            "camera": { v, p throws(ConfigurationError) in
                try reader.read(try reader.object(v, p), path: p, known: [
                    "device": { v, p throws(ConfigurationError) in c.cameraDevice = try reader.string(v, p) },
                    "width": { v, p throws(ConfigurationError) in c.cameraWidth = try reader.integer(v, p, in: 16...8192) },
                    "height": { v, p throws(ConfigurationError) in c.cameraHeight = try reader.integer(v, p, in: 16...8192) },
                    "quality": { v, p throws(ConfigurationError) in c.jpegQuality = try reader.integer(v, p, in: 1...100) },
                    "keep": { v, p throws(ConfigurationError) in c.keepPictures = try reader.integer(v, p, in: 1...1_000_000) },
                ])
            },
        ])
        return c
    }

    /// Removes `//` comments outside strings, keeping line breaks so syntax errors keep their line numbers.
    static func strippingComments(_ text: String) -> String {
        var out = [UInt8]()
        let bytes = Array(text.utf8)
        var i = 0
        var inString = false
        while i < bytes.count {
            let b = bytes[i]
            if inString {
                out.append(b)
                if b == UInt8(ascii: "\\"), i + 1 < bytes.count {
                    out.append(bytes[i + 1])
                    i += 2
                    continue
                }
                if b == UInt8(ascii: "\"") { inString = false }
            } else if b == UInt8(ascii: "\"") {
                inString = true
                out.append(b)
            } else if b == UInt8(ascii: "/"), i + 1 < bytes.count, bytes[i + 1] == UInt8(ascii: "/") {
                while i < bytes.count, bytes[i] != UInt8(ascii: "\n") { i += 1 }
                continue
            } else {
                out.append(b)
            }
            i += 1
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// Typed reads of configuration fields with errors that name the file and the field's path.
private struct FieldReader {
    let file: String

    func fail(_ path: String, _ what: String) -> ConfigurationError {
        ConfigurationError("\(file): \(path): \(what)")
    }

    func read(
        _ object: JSONObject, path: String, known: [String: (JSONValue, String) throws(ConfigurationError) -> Void]
    ) throws(ConfigurationError) {
        for key in object.keys where !key.hasPrefix("_") {
            let fieldPath = path.isEmpty ? key : "\(path).\(key)"
            guard let handler = known[key] else {
                throw fail(fieldPath, "unknown field (known here: \(known.keys.sorted().joined(separator: ", ")))")
            }
            guard let value = object[key] else { continue }
            try handler(value, fieldPath)
        }
    }

    func object(_ v: JSONValue, _ p: String) throws(ConfigurationError) -> JSONObject {
        guard let o = v.objectValue else { throw fail(p, "expected an object") }
        return o
    }

    func string(_ v: JSONValue, _ p: String) throws(ConfigurationError) -> String {
        guard let s = v.stringValue, !s.isEmpty else { throw fail(p, "expected a non-empty string") }
        return s
    }

    func optionalString(_ v: JSONValue, _ p: String) throws(ConfigurationError) -> String? {
        v.isNull ? nil : try string(v, p)
    }

    /// A name people see (a room's, the appliance's): null, or 1…`maximum` characters after trimming, without
    /// control characters.
    func optionalName(_ v: JSONValue, _ p: String, maximum: Int) throws(ConfigurationError) -> String? {
        guard let raw = try optionalString(v, p) else { return nil }
        let name = raw.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !name.isEmpty else { throw fail(p, "must not be empty (null for none)") }
        guard name.count <= maximum else { throw fail(p, "is \(name.count) characters; at most \(maximum) are allowed") }
        guard !name.unicodeScalars.contains(where: { CharacterSet.controlCharacters.contains($0) }) else {
            throw fail(p, "must not contain control characters")
        }
        return name
    }

    /// `understanding.second_reading`: "decide", "check" or "off", or (as before the reading could decide) true or false.
    func secondReading(_ v: JSONValue, _ p: String) throws(ConfigurationError) -> SecondReading.Use {
        if let b = v.boolValue { return b ? .check : .off }
        guard let s = v.stringValue, let use = SecondReading.Use(rawValue: s) else {
            throw fail(p, "expected \"decide\", \"check\" or \"off\" (or true or false)")
        }
        return use
    }

    func bool(_ v: JSONValue, _ p: String) throws(ConfigurationError) -> Bool {
        guard let b = v.boolValue else { throw fail(p, "expected true or false") }
        return b
    }

    func number(_ v: JSONValue, _ p: String, in range: ClosedRange<Double>) throws(ConfigurationError) -> Double {
        guard let d = v.doubleValue, d.isFinite else { throw fail(p, "expected a number") }
        guard range.contains(d) else { throw fail(p, "\(JSONValue.format(number: d)) is out of range \(JSONValue.format(number: range.lowerBound))…\(JSONValue.format(number: range.upperBound))") }
        return d
    }

    func integer(_ v: JSONValue, _ p: String, in range: ClosedRange<Int>) throws(ConfigurationError) -> Int {
        guard let d = v.doubleValue, d.isFinite, d == d.rounded(), abs(d) < 1e15 else { throw fail(p, "expected a whole number") }
        guard range.contains(Int(d)) else { throw fail(p, "\(Int(d)) is out of range \(range.lowerBound)…\(range.upperBound)") }
        return Int(d)
    }

    func simulation(_ v: JSONValue, _ p: String) throws(ConfigurationError) -> ApplianceConfiguration.Simulation {
        switch v {
        case .bool(true): return .always
        case .bool(false): return .never
        case .string("auto"): return .auto
        default: throw fail(p, "expected \"auto\", true (always simulated) or false (real devices only)")
        }
    }

    func line(_ v: JSONValue, _ p: String) throws(ConfigurationError) -> GPIOLineSelector {
        if let s = v.stringValue, !s.isEmpty { return .name(s) }
        if let d = v.doubleValue, d >= 0, d == d.rounded(), d < 65_536 { return .offset(UInt32(d)) }
        throw fail(p, "expected a line offset (a whole number ≥ 0) or a line name (a string)")
    }

    func output(_ v: JSONValue, _ p: String, name: String) throws(ConfigurationError) -> ApplianceConfiguration.Output {
        let o = try object(v, p)
        guard let lineValue = o["line"] else { throw fail("\(p).line", "missing: every output needs its line (offset or name)") }
        var output = ApplianceConfiguration.Output(line: try line(lineValue, "\(p).line"), contextVariable: "\(name)_state")
        try read(o, path: p, known: [
            "line": { _, _ in },
            "active_low": { v, p throws(ConfigurationError) in output.activeLow = try bool(v, p) },
            "initial": { v, p throws(ConfigurationError) in output.initial = try bool(v, p) },
            "context_variable": { v, p throws(ConfigurationError) in output.contextVariable = try string(v, p) },
        ])
        return output
    }

    func button(_ v: JSONValue, _ p: String) throws(ConfigurationError) -> ApplianceConfiguration.Button {
        let o = try object(v, p)
        guard let lineValue = o["line"] else { throw fail("\(p).line", "missing: the button needs its line (offset or name)") }
        var button = ApplianceConfiguration.Button(line: try line(lineValue, "\(p).line"))
        try read(o, path: p, known: [
            "line": { _, _ in },
            "active_low": { v, p throws(ConfigurationError) in button.activeLow = try bool(v, p) },
            "debounce_ms": { v, p throws(ConfigurationError) in button.debounce = .milliseconds(try integer(v, p, in: 0...1000)) },
            "mode": { v, p throws(ConfigurationError) in
                guard let s = v.stringValue, let mode = ApplianceConfiguration.ButtonMode(rawValue: s) else {
                    throw fail(p, "expected \"hold\" (listen while held) or \"press\" (press to start)")
                }
                button.mode = mode
            },
        ])
        return button
    }
}
