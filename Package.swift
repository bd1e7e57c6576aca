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
        // The checks the qemu hardware lane runs inside the VM against gpio-sim, snd-aloop and vivid (docs/hardware-testing.md).
        .executable(name: "hark-hwcheck", targets: ["HarkHardwareCheck"]),
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
        system("CGPIOD", pkgConfig: "libgpiod", apt: ["libgpiod-dev"]),
        system("CTurboJPEG", pkgConfig: "libturbojpeg", apt: ["libturbojpeg0-dev"]),
        system("CSQLite", pkgConfig: "sqlite3", apt: ["libsqlite3-dev"]),
        system("CWebsockets", pkgConfig: "libwebsockets", apt: ["libwebsockets-dev"]),
        system("CSodium", pkgConfig: "libsodium", apt: ["libsodium-dev"]),
        system("COpenSSL", pkgConfig: "openssl", apt: ["libssl-dev"]),
        // Opus for the rooms' live audio; its variadic controls as inline functions in shim.h.
        system("COpus", pkgConfig: "opus", apt: ["libopus-dev"]),
        .target(name: "CHarkShim", dependencies: ["CPocketSphinx", "CALSA"]),
        // V4L2's structs and ioctl numbers (macros) and a non-variadic ioctl: what Swift cannot import itself.
        .target(name: "CV4L2"),
        // libwebsockets' macros (LWS_PRE, lws_write modes) and protocol-table helpers, as functions Swift can call.
        .target(name: "CLWS", dependencies: ["CWebsockets"]),

        // PCM types, sources and sinks (files, ALSA, memory), resampling, endpointing.
        .target(name: "HarkAudio", dependencies: ["HarkCore", "CALSA", "CSndfile", "CSpeexDSP", "CHarkShim"]),
        // Recognition (PocketSphinx) with a grammar generated from the workspace, synthesis (eSpeak NG).
        .target(name: "HarkSpeech", dependencies: ["HarkCore", "HarkAudio", "CPocketSphinx", "CEspeakNG", "CHarkShim"]),

        // GPIO outputs and inputs (libgpiod 1.6 or 2.x: CGPIOD's shim picks the API from the header), the V4L2 camera with JPEG encoding, and their simulated twins.
        .target(name: "HarkDevices", dependencies: ["HarkCore", "CGPIOD", "CTurboJPEG", "CV4L2"]),
        // The always-on loop: triggers, listening, dialog, device actions, the event store (SQLite), configuration.
        .target(name: "HarkAppliance", dependencies: ["HarkCore", "HarkAudio", "HarkSpeech", "HarkDevices", "CSQLite"]),

        // The web engine: HTTP/1.1, HTTP/2, WebSocket and TLS on libwebsockets, routing, connection limits,
        // Host/Origin policy, static files. Knows nothing of the appliance, auth or the API's routes.
        .target(name: "HarkHTTP", dependencies: ["HarkCore", "CWebsockets", "CLWS", "COpenSSL"]),
        // The drop-in rooms app: people's names, rooms and memberships (SQLite through HarkAppliance's store
        // types), the events members hear, and its routes (RoomsAPI), which HarkServer mounts behind its auth.
        // Live audio: Opus frames on a WebSocket per member, speexdsp's jitter buffer, the mix-minus thread.
        .target(name: "HarkRooms", dependencies: ["HarkCore", "HarkAppliance", "HarkAudio", "HarkHTTP", "COpus", "CSpeexDSP"]),
        // The LAN companion on that engine: auth (libsodium), the Watson-compatible and appliance APIs and their
        // WebSockets. Every route is registered here (CompanionAPI.router).
        .target(name: "HarkServer", dependencies: [
            "HarkCore", "HarkAudio", "HarkSpeech", "HarkDevices", "HarkAppliance", "HarkHTTP", "CSodium", "HarkRooms",
        ]),

        // Home Assistant's Wyoming protocol over plain TCP sockets: speech, wake phrase, intents and dialog as services.
        .target(name: "HarkWyoming", dependencies: ["HarkCore", "HarkAudio", "HarkSpeech", "HarkAppliance"]),

        .executableTarget(name: "HarkCLI", dependencies: ["HarkCore", "HarkAudio", "HarkSpeech", "HarkDevices", "HarkAppliance", "HarkHTTP", "HarkServer", "HarkRooms", "HarkWyoming"]),
        .executableTarget(name: "HarkHardwareCheck", dependencies: ["HarkCore", "HarkAudio", "HarkSpeech", "HarkDevices", "HarkAppliance"]),
        .testTarget(name: "HarkCoreTests", dependencies: ["HarkCore", "HarkAudio"], exclude: ["Data"]),
        .testTarget(name: "HarkAudioTests", dependencies: ["HarkAudio", "HarkTestSupport"]),
        .testTarget(name: "HarkSpeechTests", dependencies: ["HarkSpeech", "HarkAudio", "HarkCore", "HarkTestSupport"]),
        .testTarget(name: "HarkDevicesTests", dependencies: ["HarkDevices", "HarkTestSupport"]),
        // Clients that drive a real server byte by byte (HTTP/1.1, WebSocket), shared by the two server test targets.
        // What every test target shares: `caught(_:_:)`, the thrown error as a value on Swift 6.0.3 as on 6.3, and
        // `FreshSpeech`, synthetic speech made in a process of its own.
        .target(name: "HarkTestSupport", dependencies: ["HarkAudio"], path: "Tests/HarkTestSupport"),
        .target(name: "HarkHTTPTestSupport", dependencies: ["HarkHTTP", "HarkCore"], path: "Tests/HarkHTTPTestSupport"),
        .testTarget(name: "HarkHTTPTests", dependencies: ["HarkHTTP", "HarkHTTPTestSupport", "HarkCore", "HarkTestSupport"]),
        .testTarget(name: "HarkServerTests", dependencies: ["HarkServer", "HarkHTTP", "HarkHTTPTestSupport", "HarkAppliance", "HarkCore", "HarkRooms", "HarkTestSupport"]),
        .testTarget(name: "HarkApplianceTests", dependencies: ["HarkAppliance", "HarkDevices", "HarkSpeech", "HarkAudio", "HarkCore", "HarkTestSupport"]),
        .testTarget(name: "HarkRoomsTests", dependencies: ["HarkRooms", "HarkTestSupport"]),
        .testTarget(name: "HarkWyomingTests", dependencies: ["HarkWyoming", "HarkSpeech", "HarkAudio", "HarkCore"]),
        // Runs the built `hark` binary end to end (exit codes, output shapes).
        .testTarget(name: "HarkCLITests", dependencies: ["HarkCLI", "HarkAudio", "HarkAppliance", "HarkServer"]),
    ],
    swiftLanguageModes: [.v6]
)
