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

    /// The model files in `directory`, named as `pocketsphinx-en-us` names them.
    public init(directory: URL = SpeechModel.defaultDirectory) {
        acousticModel = directory.appendingPathComponent("en-us")
        dictionary = directory.appendingPathComponent("cmudict-en-us.dict")
        phoneLanguageModel = directory.appendingPathComponent("en-us-phone.lm.bin")
        generalLanguageModel = directory.appendingPathComponent("en-us.lm.bin")
    }

    public init(acousticModel: URL, dictionary: URL, phoneLanguageModel: URL, generalLanguageModel: URL) {
        self.acousticModel = acousticModel
        self.dictionary = dictionary
        self.phoneLanguageModel = phoneLanguageModel
        self.generalLanguageModel = generalLanguageModel
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
        for (what, url) in files where !FileManager.default.isReadableFile(atPath: url.path) {
            throw .missingModel(what: what, path: url.path)
        }
    }
}
