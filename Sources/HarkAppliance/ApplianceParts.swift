import Foundation
import HarkCore
import HarkSpeech

/// The appliance's parts built from one configuration: the workspace's assistant, the devices (real or
/// simulated), the event and picture stores under the data directory, and the turn runner and voice made
/// from them. `hark run`, `hark serve` and the hardware check's `appliance.loop` all build it here, so the
/// three start the same appliance; each then adds its own ears, speaker and server.
public struct ApplianceParts {
    public var configuration: ApplianceConfiguration
    public let workspace: Workspace
    public let assistant: Assistant
    public let devices: DeviceSet
    public let dataDirectory: URL
    public let store: EventStore
    public let pictures: PictureStore

    /// Which part could not be built, with the reason in the underlying error's words.
    public enum Failure: Error, Sendable, CustomStringConvertible {
        /// The workspace's dialog does not compile.
        case workspace(String)
        /// A configured device cannot be opened.
        case devices(String)
        /// The event or picture store cannot be opened under the data directory.
        case dataDirectory(String)

        public var message: String {
            switch self {
            case .workspace(let m), .devices(let m), .dataDirectory(let m): m
            }
        }

        public var description: String { message }
    }

    /// Compiles the workspace's dialog, opens the devices `configuration` names, and the event store
    /// (`events.sqlite3`) and picture store (`pictures/`, keeping `keepPictures`) in `dataDirectory`.
    public init(configuration: ApplianceConfiguration, workspace: Workspace, dataDirectory: URL) throws(Failure) {
        self.configuration = configuration
        self.workspace = workspace
        do { assistant = try Assistant(workspace: workspace) } catch { throw .workspace("\(error)") }
        do { devices = try DeviceSet.open(configuration) } catch { throw .devices(error.message) }
        self.dataDirectory = dataDirectory
        do {
            store = try EventStore(path: dataDirectory.appendingPathComponent("events.sqlite3"))
            pictures = try PictureStore(directory: dataDirectory.appendingPathComponent("pictures"), limit: configuration.keepPictures, events: store)
        } catch {
            throw .dataDirectory("\(error)")
        }
    }

    /// The turn runner every input shares, at the configured thresholds, reporting each event to `report`
    /// after storing it.
    public func turns(seed: UInt64?, report: @escaping @Sendable (ApplianceEvent, Int64?) -> Void) -> TurnRunner {
        TurnRunner(
            assistant: assistant, devices: devices, recorder: EventRecorder(store: store, report: report), pictures: pictures,
            acousticThreshold: configuration.acousticThreshold, intentThreshold: configuration.intentThreshold, seed: seed)
    }

    /// The configured eSpeak NG voice, rate, pitch and volume.
    public func makeSynthesizer() throws(SynthesisError) -> SpeechSynthesizer {
        let c = configuration
        return try SpeechSynthesizer(voice: c.voice, rate: c.rate, pitch: c.pitch, volume: c.volume)
    }

    /// The shipped `Models/en-us-noisy.means`, if the caller found it (HarkCLI looks in the checkout or the
    /// package's share directory): the noisy-speech means `speechModel` uses unless configured otherwise.
    public var shippedNoisyMeans: URL?
    /// The shipped `Models/en-us-moderate.means`, found the same way: the moderate-noise means.
    public var shippedModerateMeans: URL?

    /// Debian's en-us model, or the configuration's acoustic model with that model's dictionary and phone model;
    /// with the configured noisy-speech and moderate-noise means, else the shipped ones for the stock model.
    public var speechModel: SpeechModel {
        var model = SpeechModel()
        if let acoustic = configuration.acousticModel {
            model = SpeechModel(acousticModel: configuration.resolve(acoustic), dictionary: model.dictionary,
                                phoneLanguageModel: model.phoneLanguageModel, generalLanguageModel: model.generalLanguageModel)
        }
        model.noisyMeans = SpeechModel.means(setting: configuration.noisyMeans, shipped: shippedNoisyMeans,
                                             stockAcousticModel: configuration.acousticModel == nil, resolve: configuration.resolve)
        model.moderateMeans = SpeechModel.means(setting: configuration.moderateMeans, shipped: shippedModerateMeans,
                                                stockAcousticModel: configuration.acousticModel == nil, resolve: configuration.resolve)
        return model
    }

    /// Dialog actions that no configured device can run, named by node (docs/device-actions.md).
    public var actionWarnings: [String] {
        var warnings: [String] = []
        for node in assistant.workspace.dialogNodes {
            for action in node.actions where action.type == "client" && action.name != RoomLink.actionName && !devices.names.contains(action.name) {
                warnings.append("dialog node \"\(node.id)\": action \"\(action.name)\": no device named \"\(action.name)\" (configured: \(devices.names.joined(separator: ", ")))")
            }
        }
        return warnings
    }
}
