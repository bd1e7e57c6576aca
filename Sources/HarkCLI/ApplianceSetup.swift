import Foundation
import HarkAppliance
import HarkCore
import HarkSpeech

/// What `hark run` and `hark serve` both need before they start: the configuration, the workspace and its
/// dialog, the devices (real or simulated) and the event and picture stores under the data directory.
struct ApplianceSetup {
    var configuration: ApplianceConfiguration
    var workspacePath: String
    var workspace: Workspace
    var assistant: Assistant
    var devices: DeviceSet
    var dataDirectory: URL
    var store: EventStore
    var pictures: PictureStore

    /// Exit codes: 66 missing configuration file, 65 bad configuration or workspace, 69 a configured device
    /// that cannot be opened, 73 a data directory that cannot be written.
    static func load(configPath: String?, workspace workspaceOverride: String?, data dataOverride: String?, simulate: Bool) throws -> ApplianceSetup {
        var configuration = try Self.configuration(configPath)
        if simulate { configuration.simulate = .always }

        let workspacePath = workspaceOverride ?? configuration.workspace.map { configuration.resolve($0).path } ?? defaultWorkspacePath()
        let workspace = try loadWorkspace(workspacePath, quiet: true)
        let assistant: Assistant
        do { assistant = try Assistant(workspace: workspace) } catch { throw CommandFailure(message: "\(workspacePath): \(error)", exitCode: 65) }
        let devices: DeviceSet
        do { devices = try DeviceSet.open(configuration) } catch { throw CommandFailure(message: "\(configPath ?? "configuration"): \(error.message)", exitCode: 69) }
        for warning in assistant.warnings + actionWarnings(assistant.workspace, devices: devices) {
            printError("warning: \(workspacePath): \(warning)")
        }

        let dataDirectory = dataOverride.map { URL(fileURLWithPath: $0) }
            ?? configuration.dataDirectory.map { configuration.resolve($0) } ?? DataDirectory.default.url
        let store: EventStore
        let pictures: PictureStore
        do {
            store = try EventStore(path: dataDirectory.appendingPathComponent("events.sqlite3"))
            pictures = try PictureStore(directory: dataDirectory.appendingPathComponent("pictures"), limit: configuration.keepPictures, events: store)
        } catch {
            throw CommandFailure(message: "\(dataDirectory.path): \(error)", exitCode: 73)
        }
        return ApplianceSetup(
            configuration: configuration, workspacePath: workspacePath, workspace: workspace, assistant: assistant,
            devices: devices, dataDirectory: dataDirectory, store: store, pictures: pictures)
    }

    /// The configuration file at `path` (66 when it is missing, 65 when it is wrong), or the defaults.
    static func configuration(_ path: String?) throws -> ApplianceConfiguration {
        guard let path else { return ApplianceConfiguration() }
        guard FileManager.default.fileExists(atPath: path) else {
            throw CommandFailure(message: "\(path): no such configuration file", exitCode: 66)
        }
        do { return try ApplianceConfiguration.load(from: URL(fileURLWithPath: path)) } catch {
            throw CommandFailure(message: error.message, exitCode: 65)
        }
    }

    /// The configured eSpeak NG voice; a voice or setting eSpeak NG refuses is a data error (65).
    func synthesizer() throws -> SpeechSynthesizer {
        let c = configuration
        do {
            return try SpeechSynthesizer(voice: c.voice, rate: c.rate, pitch: c.pitch, volume: c.volume)
        } catch {
            throw CommandFailure(message: "\(c.source?.path ?? "configuration"): voice: \(error)", exitCode: 65)
        }
    }

    /// Debian's en-us model, or the configuration's acoustic model with that model's dictionary and phone model.
    var speechModel: SpeechModel {
        let model = SpeechModel()
        guard let acoustic = configuration.acousticModel else { return model }
        return SpeechModel(acousticModel: configuration.resolve(acoustic), dictionary: model.dictionary,
                           phoneLanguageModel: model.phoneLanguageModel, generalLanguageModel: model.generalLanguageModel)
    }

    /// The turn runner every input shares, reporting each event to `report` after storing it.
    func turns(seed: UInt64?, report: @escaping @Sendable (ApplianceEvent, Int64?) -> Void) -> TurnRunner {
        TurnRunner(
            assistant: assistant, devices: devices, recorder: EventRecorder(store: store, report: report), pictures: pictures,
            acousticThreshold: configuration.acousticThreshold, intentThreshold: configuration.intentThreshold, seed: seed)
    }

    /// Dialog actions that no configured device can run, named by node (docs/device-actions.md).
    static func actionWarnings(_ workspace: Workspace, devices: DeviceSet) -> [String] {
        var warnings: [String] = []
        for node in workspace.dialogNodes {
            for action in node.actions where action.type == "client" && !devices.names.contains(action.name) {
                warnings.append("dialog node \"\(node.id)\": action \"\(action.name)\": no device named \"\(action.name)\" (configured: \(devices.names.joined(separator: ", ")))")
            }
        }
        return warnings
    }
}
