// swift-tools-version:6.0
// Hark: an offline voice appliance. No outside Swift packages: the toolchain and Debian's C libraries only.
import PackageDescription

let package = Package(
    name: "Hark",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "hark", targets: ["HarkCLI"]),
        .library(name: "HarkCore", targets: ["HarkCore"]),
    ],
    targets: [
        // The language engine: workspace model, validation, matcher, entities, expressions, dialog.
        // Foundation only, so it builds and tests anywhere Swift runs.
        .target(name: "HarkCore"),
        .executableTarget(name: "HarkCLI", dependencies: ["HarkCore"]),
        .testTarget(name: "HarkCoreTests", dependencies: ["HarkCore"]),
        // Runs the built `hark` binary end to end (exit codes, output shapes).
        .testTarget(name: "HarkCLITests", dependencies: ["HarkCLI"]),
    ],
    swiftLanguageModes: [.v6]
)
