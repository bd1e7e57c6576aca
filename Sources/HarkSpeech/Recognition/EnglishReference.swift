import Foundation

/// The general English decoding behind `RecognitionOptions.anyEnglish`: PocketSphinx's general language model and
/// full pronunciation dictionary over an utterance's audio, for the acoustic score of the best path through any
/// English. It holds about 100 MiB (the dictionary, the language model and a copy of the acoustic model), so a process
/// keeps one per model and setting (`shared`) and its recognisers take turns with it: `hark run`'s microphone and
/// web push-to-talk recognisers, the Wyoming server's. A decoding takes a fraction of the utterance's length and runs
/// only for clean utterances, so waiting for another recogniser's turn is rare and short.
///
/// @unchecked Sendable: the decoder is used only under `lock`.
final class EnglishReference: @unchecked Sendable {
    static let search = "english"

    private let decoder: PocketSphinxDecoder
    private let lock = NSLock()

    private static let sharedLock = NSLock()
    nonisolated(unsafe) private static var loaded: [[String]: EnglishReference] = [:]

    /// The process's reference for decoder `arguments` (`-hmm`, `-dict`, beams …) and `languageModel`, loaded on first
    /// use and kept for the life of the process.
    static func shared(arguments: [String: String], languageModel: URL) throws -> EnglishReference {
        let flat = arguments.keys.sorted().flatMap { [$0, arguments[$0] ?? ""] }
        let key = flat + [languageModel.path]
        sharedLock.lock()
        defer { sharedLock.unlock() }
        if let found = loaded[key] { return found }
        let made = try EnglishReference(arguments: flat, languageModel: languageModel)
        loaded[key] = made
        return made
    }

    private init(arguments: [String], languageModel: URL) throws {
        decoder = try PocketSphinxDecoder(arguments: arguments)
        try decoder.addLanguageModel(name: Self.search, file: languageModel)
        try decoder.useSearch(Self.search)
    }

    /// Starts `score(of:background:)` on a thread of its own, alongside the grammar and phone-loop passes.
    func start(_ audio: [Int16], background: [Int16] = []) -> BackgroundWork<Double?> {
        BackgroundWork { [self] in try score(of: audio, background: background) }
    }

    /// Decodes `audio` as one whole utterance (batch mean; `background` first through the front end only, as
    /// `SpeechRecognizer.decodeWhole` does) and returns its best path's acoustic score per frame as a natural log,
    /// in the grammar search's units; nil when it found no path.
    func score(of audio: [Int16], background: [Int16] = []) throws -> Double? {
        lock.lock()
        defer { lock.unlock() }
        try decoder.decodeUtterance(audio, background: background)
        return SpeechRecognizer.pathScore(of: decoder, lattice: true)
    }
}
