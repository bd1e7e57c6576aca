import Foundation

/// Where PocketSphinx's English model lives: the acoustic model directory, the pronunciation dictionary,
/// the phone language model (for the acoustic confidence's free phone loop) and the general language model
/// (for `--general` transcription). Debian's `pocketsphinx-en-us` puts them under
/// `/usr/share/pocketsphinx/model/en-us`.
public struct SpeechModel: Sendable, Equatable {
    public static let defaultDirectory = URL(fileURLWithPath: "/usr/share/pocketsphinx/model/en-us")

    public var acousticModel: URL
    public var dictionary: URL
    public var phoneLanguageModel: URL
    public var generalLanguageModel: URL
    /// Gaussian means for noisy utterances, in place of the acoustic model's own (PocketSphinx's `-mean`), or
    /// nil to use the model's. Hark ships `Models/en-us-noisy.means`: the stock en-us means adapted to speech in
    /// generated noise, clatter and babble, never the benchmark's kitchen recording (docs/model-adaptation.md).
    /// Only the noisy-speech decoder loads them (`RecognitionOptions.NoisyDecoding`).
    public var noisyMeans: URL?
    /// Gaussian means for utterances in moderate noise (`RecognitionOptions.ModerateDecoding`), or nil to decode
    /// them with the model's own. Hark ships `Models/en-us-moderate.means`: the stock means adapted the same way to
    /// speech in the same general noise at 15, 18 and 21 dB (docs/model-adaptation.md).
    public var moderateMeans: URL?

    /// The file name of the shipped noisy-speech means, under `Models/`.
    public static let noisyMeansFileName = "en-us-noisy.means"
    /// The file name of the shipped moderate-noise means, under `Models/`.
    public static let moderateMeansFileName = "en-us-moderate.means"

    /// The means file a setting asks for (noisy-speech or moderate-noise): "none" → nil; a path → that file
    /// (`resolve` makes it a URL); no setting → the `shipped` file, but only with the stock acoustic model, whose
    /// means it adapts (another model brings its own). The one rule for `hark`'s `--noisy-means` and
    /// `--moderate-means` and the configuration's `noisy_means` and `moderate_means`.
    public static func means(setting: String?, shipped: URL?, stockAcousticModel: Bool, resolve: (String) -> URL) -> URL? {
        switch setting {
        case "none": nil
        case let path?: resolve(path)
        case nil: stockAcousticModel ? shipped : nil
        }
    }

    /// The model files in `directory`, named as `pocketsphinx-en-us` names them.
    public init(directory: URL = SpeechModel.defaultDirectory, noisyMeans: URL? = nil, moderateMeans: URL? = nil) {
        acousticModel = directory.appendingPathComponent("en-us")
        dictionary = directory.appendingPathComponent("cmudict-en-us.dict")
        phoneLanguageModel = directory.appendingPathComponent("en-us-phone.lm.bin")
        generalLanguageModel = directory.appendingPathComponent("en-us.lm.bin")
        self.noisyMeans = noisyMeans
        self.moderateMeans = moderateMeans
    }

    public init(
        acousticModel: URL, dictionary: URL, phoneLanguageModel: URL, generalLanguageModel: URL, noisyMeans: URL? = nil,
        moderateMeans: URL? = nil
    ) {
        self.acousticModel = acousticModel
        self.dictionary = dictionary
        self.phoneLanguageModel = phoneLanguageModel
        self.generalLanguageModel = generalLanguageModel
        self.noisyMeans = noisyMeans
        self.moderateMeans = moderateMeans
    }

    /// Throws naming the first missing file: the acoustic model (a directory with `mdef`), the dictionary,
    /// and the phone or general language model when they will be used.
    public func validate(phoneLanguageModel needsPhones: Bool, generalLanguageModel needsGeneral: Bool) throws(SpeechRecognitionError) {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: acousticModel.path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw .missingModel(what: "acoustic model directory", path: acousticModel.path)
        }
        let mdef = acousticModel.appendingPathComponent("mdef")
        guard FileManager.default.fileExists(atPath: mdef.path) else {
            throw .missingModel(what: "acoustic model definition (mdef)", path: mdef.path)
        }
        var files = [("pronunciation dictionary", dictionary)]
        if needsPhones { files.append(("phone language model", phoneLanguageModel)) }
        if needsGeneral { files.append(("general language model", generalLanguageModel)) }
        let means = [("noisy-speech means", noisyMeans), ("moderate-noise means", moderateMeans)].compactMap { what, url in url.map { (what, $0) } }
        files += means
        for (what, url) in files where !FileManager.default.isReadableFile(atPath: url.path) {
            throw .missingModel(what: what, path: url.path)
        }
        // Means made for another model have another size; PocketSphinx would only log that and fail vaguely.
        let own = acousticModel.appendingPathComponent("means")
        // The files' own sizes, not a symbolic link's (a means file linked into place is common).
        let size = { (url: URL) in
            (try? FileManager.default.attributesOfItem(atPath: url.resolvingSymlinksInPath().path)[.size] as? Int) ?? nil
        }
        for (_, url) in means {
            if let expected = size(own), let found = size(url), expected != found {
                throw .mismatchedMeans(path: url.path, bytes: found, model: own.path, modelBytes: expected)
            }
        }
    }
}
