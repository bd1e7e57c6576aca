extension ESpeakPronouncer {
    /// eSpeak NG 1.51's `en-us` phonemes → ARPAbet. The set is every phoneme eSpeak produced for the
    /// 117k plain words of cmudict-en-us.dict; each choice is the one that matched cmudict most often
    /// (e.g. `a#`, eSpeak's reduced "a" of "about", is AH, not AE: 57.2% vs 55.7% exact matches).
    public static let englishUS: [String: [String]] = [
        // Vowels. eSpeak's en-us `0` is the "hot" vowel, AA in General American.
        "a": ["AE"], "aa": ["AE"], "a#": ["AH"], "A:": ["AA"], "0": ["AA"], "V": ["AH"],
        "@": ["AH"], "@2": ["AH"], "@-": ["AH"],
        "E": ["EH"], "I": ["IH"], "I2": ["IH"], "I#": ["IH"], "i": ["IY"], "i:": ["IY"], "i::": ["IY"],
        "O": ["AO"], "O:": ["AO"], "O2": ["AO"], "o": ["OW"], "oU": ["OW"], "U": ["UH"], "u:": ["UW"],
        "eI": ["EY"], "aI": ["AY"], "aU": ["AW"], "OI": ["OY"],
        // R-coloured vowels: `3:` stressed and `3` unstressed are both ER; the others are vowel + R.
        "3:": ["ER"], "3": ["ER"], "A@": ["AA", "R"], "O@": ["AO", "R"], "o@": ["AO", "R"], "e@": ["EH", "R"],
        "i@": ["IH", "R"], "i@3": ["IH", "R"], "U@": ["UH", "R"], "aI3": ["AY", "ER"], "aI@": ["AY", "AH"],
        // Syllabic consonants carry a schwa in cmudict: "button" B AH T AH N, "little" L IH T AH L.
        "@L": ["AH", "L"], "n-": ["AH", "N"],
        // French nasal vowels in borrowed names.
        "A~": ["AA", "N"], "O~": ["AO", "N"],
        // Consonants. The flap `t#`, the glottal stop `?` and the `t2` of "-stown" are all T in cmudict.
        "p": ["P"], "b": ["B"], "t": ["T"], "t#": ["T"], "t2": ["T"], "?": ["T"], "d": ["D"], "k": ["K"],
        "g": ["G"], "x": ["K"], "f": ["F"], "v": ["V"], "T": ["TH"], "D": ["DH"], "s": ["S"], "z": ["Z"],
        "S": ["SH"], "Z": ["ZH"], "h": ["HH"], "tS": ["CH"], "dZ": ["JH"], "m": ["M"], "n": ["N"],
        "N": ["NG"], "l": ["L"], "l#": ["L"], "r": ["R"], "r-": ["R"], "w": ["W"], "j": ["Y"],
        // Markers without sound: `;` palatalises the previous phoneme, `|` separates syllables.
        ";": [], "|": [],
    ]
}
