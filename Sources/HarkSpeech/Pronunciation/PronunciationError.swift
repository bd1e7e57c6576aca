/// Why a pronunciation could not be loaded or produced.
public enum PronunciationError: Error, CustomStringConvertible, Sendable, Equatable {
    /// A dictionary file could not be read.
    case unreadable(path: String, reason: String)
    /// A dictionary line is not `word PHONE PHONE …` with phones from `ARPAbet.phones`.
    case malformedLine(path: String, line: Int, reason: String)
    /// Not something to pronounce: empty, or more than one word.
    case notAWord(String)
    /// eSpeak NG produced no phonemes for the word.
    case noPhonemes(word: String)
    /// eSpeak NG produced a phoneme the phoneme map has no ARPAbet phones for.
    case unmappedPhoneme(word: String, phoneme: String, eSpeakPhonemes: String)
    /// A phoneme map entry names something that is not an acoustic-model phone.
    case invalidMapping(phoneme: String, phone: String)
    /// eSpeak NG itself failed (or has no such voice).
    case engine(ESpeakError)

    public var description: String {
        switch self {
        case let .unreadable(path, reason):
            return "\(path): cannot read pronunciation dictionary: \(reason)"
        case let .malformedLine(path, line, reason):
            return "\(path):\(line): \(reason)"
        case let .notAWord(text):
            return "\"\(text)\" is not a single word to pronounce"
        case let .noPhonemes(word):
            return "eSpeak NG gave no phonemes for \"\(word)\""
        case let .unmappedPhoneme(word, phoneme, phonemes):
            return "\"\(word)\": eSpeak NG phoneme \"\(phoneme)\" (in \(phonemes)) has no ARPAbet equivalent"
        case let .invalidMapping(phoneme, phone):
            return "phoneme map: eSpeak NG phoneme \"\(phoneme)\" maps to \"\(phone)\", which is not an acoustic-model phone"
        case let .engine(error):
            return error.description
        }
    }
}
