import CEspeakNG

/// One installed eSpeak NG voice or voice variant, as `espeak_ListVoices` reports it.
public struct ESpeakVoice: Sendable, Hashable, CustomStringConvertible {
    /// The voice's given name, e.g. `English_(America)` or, for a variant, `f3`'s display name.
    public var name: String
    /// The file under `espeak-ng-data/voices`, e.g. `gmw/en-US` or `!v/f3` for a variant.
    public var identifier: String
    /// Language tags in preference order, e.g. `["en-us", "en"]`: pass one to `SpeechSynthesizer(voice:)`.
    public var languages: [String]
    /// 0 unknown, 1 male, 2 female.
    public var gender: Int

    public var description: String { "\(languages.first ?? identifier) (\(name))" }

    /// The name to put after `+` in a voice such as `en+f3`: the variant file's name.
    public var variantName: String { String(identifier.split(separator: "/").last ?? Substring(identifier)) }

    init(_ voice: espeak_VOICE) {
        name = voice.name.map { String(cString: $0) } ?? ""
        identifier = voice.identifier.map { String(cString: $0) } ?? ""
        gender = Int(voice.gender)
        languages = []
        // `languages` is a list of (priority byte, zero-terminated name), ended by an empty name.
        guard var cursor = voice.languages else { return }
        while cursor.pointee != 0 {
            cursor += 1  // the priority byte
            let language = String(cString: cursor)
            if language.isEmpty { break }
            languages.append(language)
            cursor += language.utf8.count + 1
        }
    }
}
