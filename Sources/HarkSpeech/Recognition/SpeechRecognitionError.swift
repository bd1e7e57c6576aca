import Foundation
import HarkAudio

/// Why a recogniser cannot be built or fed: bad model paths, words with no pronunciation, wrong audio.
public enum SpeechRecognitionError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A model file or directory is missing: what it is and where it was looked for.
    case missingModel(what: String, path: String)
    /// A means file (`SpeechModel.noisyMeans`) whose size differs from the acoustic model's own means: made
    /// for another model.
    case mismatchedMeans(path: String, bytes: Int, model: String, modelBytes: Int)
    /// Words of the grammar that neither the dictionary nor the pronunciation source can pronounce.
    case unknownWords([String], dictionary: String, reason: String)
    /// The workspace has no example the grammar can hold.
    case emptyGrammar(workspace: String)
    /// The workspace's grammar has no finite word automaton (a rule that uses itself).
    case invalidGrammar(workspace: String, reason: String)
    /// Audio that is not 16 kHz mono.
    case unsupportedFormat(PCMFormat)
    /// `process` or `finishUtterance` without `startUtterance`.
    case noUtterance
    /// `decodeWhole` on a recogniser with a live cepstral mean, which decodes as audio arrives instead.
    case wholeUtteranceNeedsBatchMean

    public var description: String {
        switch self {
        case .missingModel(let what, let path):
            return "\(what) not found at \(path) (install the pocketsphinx-en-us package or pass another model directory)"
        case .mismatchedMeans(let path, let bytes, let model, let modelBytes):
            return "\(path): \(bytes) bytes of Gaussian means, but the acoustic model's \(model) has \(modelBytes): "
                + "they were made for another model (adapt the one you use, docs/model-adaptation.md)"
        case .unknownWords(let words, let dictionary, let reason):
            return "no pronunciation for \(words.count) word\(words.count == 1 ? "" : "s") (not in \(dictionary); \(reason)): "
                + words.joined(separator: ", ")
        case .emptyGrammar(let workspace):
            return "workspace \(workspace) has no intent example to build a speech grammar from"
        case .invalidGrammar(let workspace, let reason):
            return "workspace \(workspace): cannot build its speech grammar: \(reason)"
        case .unsupportedFormat(let format):
            return "the recogniser needs 16000 Hz mono audio, got \(format)"
        case .noUtterance:
            return "no utterance started: call startUtterance() first"
        case .wholeUtteranceNeedsBatchMean:
            return "decodeWhole needs a recogniser with the batch cepstral mean (this one decodes live, as audio arrives)"
        }
    }
}
