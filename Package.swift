// swift-tools-version:6.0
// Hark: an offline voice appliance. No outside Swift packages: the toolchain and Debian's C libraries only.
import PackageDescription

/// A Debian C library reached through a `.systemLibrary` target (module.modulemap + shim.h).
func system(_ name: String, pkgConfig: String, apt: [String]) -> Target {
    .systemLibrary(name: name, pkgConfig: pkgConfig, providers: [.apt(apt)])
}

let package = Package(
    name: "Hark",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "hark", targets: ["HarkCLI"]),
        .library(name: "HarkCore", targets: ["HarkCore"]),
    ],
    targets: [
        // The language engine: workspace model, validation, matcher, entities, expressions, dialog,
        // grammar generation. Foundation only, so it builds and tests anywhere Swift runs.
        .target(name: "HarkCore"),

        // The C boundary: one system-library target per Debian library, one shim for what Swift cannot call.
        system("CPocketSphinx", pkgConfig: "pocketsphinx", apt: ["libpocketsphinx-dev", "libsphinxbase-dev"]),
        system("CEspeakNG", pkgConfig: "espeak-ng", apt: ["libespeak-ng-dev"]),
        system("CALSA", pkgConfig: "alsa", apt: ["libasound2-dev"]),
        system("CSndfile", pkgConfig: "sndfile", apt: ["libsndfile1-dev"]),
        system("CSpeexDSP", pkgConfig: "speexdsp", apt: ["libspeexdsp-dev"]),
        .target(name: "CHarkShim", dependencies: ["CPocketSphinx", "CALSA"]),

        // PCM types, sources and sinks (files, ALSA, memory), resampling, endpointing.
        .target(name: "HarkAudio", dependencies: ["HarkCore", "CALSA", "CSndfile", "CSpeexDSP", "CHarkShim"]),
        // Recognition (PocketSphinx) with a grammar generated from the workspace, synthesis (eSpeak NG).
        .target(name: "HarkSpeech", dependencies: ["HarkCore", "HarkAudio", "CPocketSphinx", "CEspeakNG", "CHarkShim"]),

        .executableTarget(name: "HarkCLI", dependencies: ["HarkCore", "HarkAudio", "HarkSpeech"]),
        .testTarget(name: "HarkCoreTests", dependencies: ["HarkCore"]),
        .testTarget(name: "HarkAudioTests", dependencies: ["HarkAudio"]),
        .testTarget(name: "HarkSpeechTests", dependencies: ["HarkSpeech", "HarkAudio", "HarkCore"]),
        // Runs the built `hark` binary end to end (exit codes, output shapes).
        .testTarget(name: "HarkCLITests", dependencies: ["HarkCLI", "HarkAudio"]),
    ],
    swiftLanguageModes: [.v6]
)
