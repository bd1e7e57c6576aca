import Foundation
import HarkAppliance
import HarkCore
import HarkSpeech

/// What `hark run` and `hark serve` both do before they start: read the configuration, find the workspace
/// and the data directory (flags over the configuration over the defaults), and build the appliance's parts
/// (`ApplianceParts`, which the hardware check builds too), turning each failure into its exit code.
enum ApplianceSetup {
    /// Exit codes: 66 missing configuration file, 65 bad configuration or workspace, 69 a configured device
    /// that cannot be opened, 73 a data directory that cannot be written.
    static func load(configPath: String?, workspace workspaceOverride: String?, data dataOverride: String?, simulate: Bool) throws -> ApplianceParts {
        var configuration = try Self.configuration(configPath)
        if simulate { configuration.simulate = .always }

        let workspacePath = workspaceOverride ?? configuration.workspace.map { configuration.resolve($0).path } ?? defaultWorkspacePath()
        let workspace = try loadWorkspace(workspacePath, quiet: true)
        let dataDirectory = dataOverride.map { URL(fileURLWithPath: $0) }
            ?? configuration.dataDirectory.map { configuration.resolve($0) } ?? DataDirectory.default.url
        var parts: ApplianceParts
        do {
            parts = try ApplianceParts(configuration: configuration, workspace: workspace, dataDirectory: dataDirectory)
        } catch {
            switch error {
            case .workspace(let m): throw CommandFailure(message: "\(workspacePath): \(m)", exitCode: 65)
            case .devices(let m): throw CommandFailure(message: "\(configPath ?? "configuration"): \(m)", exitCode: 69)
            case .dataDirectory(let m): throw CommandFailure(message: "\(dataDirectory.path): \(m)", exitCode: 73)
            }
        }
        parts.shippedNoisyMeans = SpeechCLI.modelsFile(SpeechModel.noisyMeansFileName)
        parts.shippedModerateMeans = SpeechCLI.modelsFile(SpeechModel.moderateMeansFileName)
        if configuration.acousticModel == nil {
            SpeechCLI.noteMissingMeans(noisy: (configuration.noisyMeans, parts.shippedNoisyMeans),
                                       moderate: (configuration.moderateMeans, parts.shippedModerateMeans),
                                       settings: ("the configuration's \"noisy_means\"", "the configuration's \"moderate_means\""))
        }
        for warning in parts.assistant.warnings + parts.actionWarnings {
            printError("warning: \(workspacePath): \(warning)")
        }
        return parts
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
}

extension ApplianceParts {
    /// The configured eSpeak NG voice; a voice or setting eSpeak NG refuses is a data error (65).
    func synthesizer() throws -> SpeechSynthesizer {
        do { return try makeSynthesizer() } catch {
            throw CommandFailure(message: "\(configuration.source?.path ?? "configuration"): voice: \(error)", exitCode: 65)
        }
    }
}
