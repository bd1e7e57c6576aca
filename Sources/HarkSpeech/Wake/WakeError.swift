import HarkAudio

/// Why a wake-phrase spotter cannot be built or fed.
public enum WakeError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The phrase has no words.
    case emptyPhrase(String)
    /// Words of the phrase that neither the dictionary nor the pronunciation source can pronounce.
    case unknownWords([String], phrase: String, reason: String)
    /// Audio that is not 16 kHz mono.
    case unsupportedFormat(PCMFormat)
    /// `noisy_means` is true but the speech model has no noisy-speech means file.
    case noNoisyMeans
    /// The settings name a verifier file (`verifier`) but the spotter was given no verifier.
    case noVerifier(String)
    /// The verifier was trained on another phrase than the one listened for.
    case verifierForAnotherPhrase(verifier: String, phrase: String)

    public var description: String {
        switch self {
        case let .emptyPhrase(phrase):
            return "the wake phrase \"\(phrase)\" has no words"
        case let .unknownWords(words, phrase, reason):
            return "no pronunciation for \(words.map { "'\($0)'" }.joined(separator: ", ")) in the wake phrase \"\(phrase)\" (\(reason))"
        case let .unsupportedFormat(format):
            return "the wake-phrase spotter needs 16000 Hz mono audio, got \(format)"
        case .noNoisyMeans:
            return "the wake settings ask for noisy_means, but no noisy-speech means file was found (\(SpeechModel.noisyMeansFileName) in Models/)"
        case let .verifierForAnotherPhrase(verifier, phrase):
            return "the wake verifier was trained on \"\(verifier)\" and cannot judge \"\(phrase)\": set \"verifier\" to null in the wake settings for another phrase"
        case let .noVerifier(name):
            return "the wake settings name the verifier \"\(name)\", but it was not loaded (it belongs beside the settings file)"
        }
    }
}
