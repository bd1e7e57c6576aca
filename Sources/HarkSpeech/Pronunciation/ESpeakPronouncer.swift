import CEspeakNG

/// Pronunciations for words the CMU dictionary lacks: eSpeak NG's letter-to-sound rules and its own
/// dictionary give phonemes, which a phoneme map turns into the acoustic model's ARPAbet phones.
///
/// eSpeak is what Hark speaks with, so a word it pronounces is a word the recogniser expects said the same
/// way. Measured against cmudict (PronunciationTests): 92% of 300 common words match a cmudict
/// pronunciation exactly (phone error rate 2%); of words sampled evenly through cmudict, mostly names,
/// 57% (11%); all 117k plain cmudict words, 60% (10%).
public struct ESpeakPronouncer: Sendable {
    /// The eSpeak NG voice whose rules are used (`en-us` matches the en-us acoustic model).
    public let voice: String
    /// eSpeak phoneme name (stress marks removed) → ARPAbet phones; an empty list is a marker with no sound.
    public let phonemeMap: [String: [String]]

    /// Checks that `voice` exists and that every phone in `phonemeMap` is an acoustic-model phone.
    public init(voice: String = "en-us", phonemeMap: [String: [String]] = ESpeakPronouncer.englishUS) throws(PronunciationError) {
        for (phoneme, phones) in phonemeMap.sorted(by: { $0.key < $1.key }) {
            for phone in phones where !ARPAbet.phoneSet.contains(phone) {
                throw .invalidMapping(phoneme: phoneme, phone: phone)
            }
        }
        self.voice = voice
        self.phonemeMap = phonemeMap
        _ = try Self.withVoice(voice) { () throws(PronunciationError) in () }
    }

    /// ARPAbet phones for `word`, e.g. `hark` → `HH AA R K`.
    public func phones(for word: String) throws(PronunciationError) -> [String] {
        let phonemes = try eSpeakPhonemes(for: word)
        var phones: [String] = []
        for phoneme in phonemes {
            guard let mapped = phonemeMap[phoneme] else {
                throw .unmappedPhoneme(word: word, phoneme: phoneme, eSpeakPhonemes: phonemes.joined(separator: " "))
            }
            for phone in mapped {
                // eSpeak writes an r-coloured vowel and then the linking r ("nearest" n i@3 r @ s t,
                // "arrive" 3 r aI v); cmudict has one R (N IH R AH S T, ER AY V). Measured over cmudict's
                // 117k plain words: 57.2% → 59.7% exact.
                if phone == "R", let last = phones.last, last == "R" || last == "ER" { continue }
                phones.append(phone)
            }
        }
        guard !phones.isEmpty else { throw .noPhonemes(word: word) }
        return phones
    }

    /// eSpeak NG's phoneme names for `word` in its ASCII notation, stress marks removed, e.g.
    /// `hello` → `h @ l oU`. The corresponding C function is `espeak_TextToPhonemes`.
    public func eSpeakPhonemes(for word: String) throws(PronunciationError) -> [String] {
        guard !word.isEmpty, !word.contains(where: \.isWhitespace) else { throw .notAWord(word) }
        let raw = try Self.withVoice(voice) { () throws(PronunciationError) -> String in
            // Phoneme mode: ASCII names (bit 1 clear), `_` between phonemes (bits 8–23), so multi-letter
            // names such as `oU` and `tS` arrive already split.
            let mode = Int32(UInt8(ascii: "_")) << 8
            var output = ""
            word.withCString { text in
                var cursor: UnsafeRawPointer? = UnsafeRawPointer(text)
                // One call per clause; the cursor becomes nil at the end of the text.
                while cursor != nil {
                    guard let phonemes = espeak_TextToPhonemes(&cursor, Int32(espeakCHARS_UTF8), mode) else { break }
                    output += " " + String(cString: phonemes)
                }
            }
            return output
        }
        // Stress (' ,) and unstressed (% =) marks prefix the vowel they apply to; they are not phonemes.
        let phonemes = raw.split(whereSeparator: { $0 == "_" || $0 == " " })
            .map { String($0.drop(while: { "',%=".contains($0) })) }
            .filter { !$0.isEmpty }
        guard !phonemes.isEmpty else { throw .noPhonemes(word: word) }
        return phonemes
    }

    private static func withVoice<T>(_ voice: String, _ body: () throws(PronunciationError) -> T) throws(PronunciationError) -> T {
        try ESpeakEngine.withEngine { (started) throws(PronunciationError) -> T in
            do throws(ESpeakError) {
                _ = try started.get()
                try ESpeakEngine.select(voice: voice)
            } catch {
                throw .engine(error)
            }
            return try body()
        }
    }
}
