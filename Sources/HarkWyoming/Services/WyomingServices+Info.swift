import Foundation
import HarkCore

extension WyomingServices {
    /// The `info` event answering `describe`: one program per offered service, with the fields of
    /// `wyoming/info.py`'s dataclasses in their order (`Artifact`: name, attribution, installed, description,
    /// version; then the program's own). Home Assistant's Wyoming integration lists these.
    public var info: WyomingEvent {
        var data = JSONObject()
        data["asr"] = .array(asr.map { [asrProgram($0)] } ?? [])
        data["tts"] = .array(tts.map { [ttsProgram($0)] } ?? [])
        data["handle"] = .array(handle.map { [handleProgram($0)] } ?? [])
        data["intent"] = .array(intent.map { [intentProgram($0)] } ?? [])
        data["wake"] = .array(wake.map { [wakeProgram($0)] } ?? [])
        data["mic"] = []
        data["snd"] = []
        return WyomingEvent("info", data)
    }

    /// The languages the English acoustic model and the English matcher serve.
    static let languages: JSONValue = ["en"]

    /// Hark has no public address; `url` is required (a string) by `Attribution`, so it is empty.
    static let harkAttribution: JSONValue = ["name": "Hark", "url": ""]

    private func artifact(_ name: String, description: String, attribution: JSONValue = harkAttribution, version: String?) -> JSONObject {
        [
            "name": .string(name), "attribution": attribution, "installed": true,
            "description": .string(description), "version": version.map { .string($0) } ?? .null,
        ]
    }

    private func asrProgram(_ asr: ASR) -> JSONValue {
        var model = artifact(asr.model, description: "PocketSphinx with a grammar of the \(asr.model) workspace's sentences", attribution: [
            "name": "CMU Sphinx (PocketSphinx en-us)", "url": "https://cmusphinx.github.io",
        ], version: version)
        model["languages"] = Self.languages
        var program = artifact("hark-asr", description: "Hark speech recognition: the workspace's commands, with acoustic rejection", version: version)
        program["models"] = [.object(model)]
        program["supports_transcript_streaming"] = true
        // The whole utterance is decoded at audio-stop: HA's voice-activity detector ends it.
        program["requires_external_vad"] = true
        program["prefers_auto_gain_enabled"] = true
        // Denoisers measured here cost accuracy (docs/speech.md): Hark prefers the raw microphone.
        program["prefers_noise_reduction_enabled"] = false
        return .object(program)
    }

    private func ttsProgram(_ tts: TTS) -> JSONValue {
        let voices: [JSONValue] = tts.voices.compactMap { voice in
            guard let language = voice.languages.first else { return nil }
            var v = artifact(language, description: voice.name, attribution: [
                "name": "eSpeak NG", "url": "https://github.com/espeak-ng/espeak-ng",
            ], version: nil)
            v["languages"] = .array(voice.languages.map { .string($0) })
            v["speakers"] = .null
            return .object(v)
        }
        var program = artifact("hark-tts", description: "eSpeak NG (speaker: an eSpeak NG variant such as f3 or m2)", version: version)
        program["voices"] = .array(voices)
        program["supports_synthesize_streaming"] = true
        return .object(program)
    }

    private func wakeProgram(_ wake: Wake) -> JSONValue {
        // HA shows a wake word's description as its name (homeassistant/components/wyoming/wake_word.py).
        var model = artifact(wake.model, description: wake.phrase.capitalized, version: version)
        model["languages"] = Self.languages
        model["phrase"] = .string(wake.phrase)
        var program = artifact("hark-wake", description: "Hark wake phrase", version: version)
        program["models"] = [.object(model)]
        return .object(program)
    }

    private func intentProgram(_ intent: Intent) -> JSONValue {
        var model = artifact(intent.model, description: "Intents and entities of the \(intent.model) workspace (Watson Assistant v1)", version: version)
        model["languages"] = Self.languages
        var program = artifact("hark-intent", description: "Hark intent recognition", version: version)
        program["models"] = [.object(model)]
        return .object(program)
    }

    private func handleProgram(_ handle: Handle) -> JSONValue {
        var model = artifact(handle.model, description: "The \(handle.model) workspace's dialog, acting on Hark's devices", version: version)
        model["languages"] = Self.languages
        var program = artifact("hark-dialog", description: "Hark dialog: answers and device actions", version: version)
        program["models"] = [.object(model)]
        program["supports_handled_streaming"] = false
        program["supports_home_control"] = true
        return .object(program)
    }
}
