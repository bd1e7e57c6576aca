import Foundation
import Testing

/// Where `hark` finds its shipped files (`SpeechCLI.repositoryFile`): the checkout it was built in, and, installed
/// as `<prefix>/bin/hark`, `<prefix>/share/hark` (the .deb's /usr/share/hark, docs/packaging.md), also when it is
/// started by a bare name found on PATH.
@Suite struct InstalledLayoutTests {
    /// A `<prefix>/bin/hark` hard link (a copy where linking is refused) to the built binary in a fresh directory:
    /// `/proc/self/exe` of a hard link is the link's path, so the binary sees itself installed there.
    static func installedBinary(withShare: Bool) throws -> (prefix: URL, binary: URL) {
        let fm = FileManager.default
        let prefix = fm.temporaryDirectory.appendingPathComponent("hark-layout-\(UUID().uuidString)")
        let bin = prefix.appendingPathComponent("bin")
        try fm.createDirectory(at: bin, withIntermediateDirectories: true)
        let binary = bin.appendingPathComponent("hark")
        do { try fm.linkItem(at: CLITests.binary, to: binary) } catch { try fm.copyItem(at: CLITests.binary, to: binary) }
        if withShare {
            let share = prefix.appendingPathComponent("share/hark")
            for dir in ["Intents", "Models"] {
                try fm.createDirectory(at: share.appendingPathComponent(dir), withIntermediateDirectories: true)
            }
            try fm.copyItem(at: CLITests.root.appendingPathComponent("Intents/home.json"), to: share.appendingPathComponent("Intents/home.json"))
            for file in ["wake.json", "wake-verifier.json"] {
                try fm.copyItem(at: CLITests.root.appendingPathComponent("Models/\(file)"), to: share.appendingPathComponent("Models/\(file)"))
            }
        }
        return (prefix, binary)
    }

    /// Runs `hark ARGS` by its bare name through PATH (as a shell would), in `directory`.
    static func run(_ args: [String], path: URL, in directory: URL) throws -> CLITests.Result {
        try CLITests.execute(URL(fileURLWithPath: "/usr/bin/env"), ["PATH=\(path.path):/usr/bin:/bin", "hark"] + args, in: directory,
                             input: FileHandle.nullDevice)
    }

    @Test func versionNamesTheCheckout() throws {
        let r = try CLITests.hark(["--version"])
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 2)
        #expect(lines.first?.range(of: #"^hark [0-9]+\.[0-9]+\.[0-9]+$"#, options: .regularExpression) != nil, "\(r.stdout)")
        #expect(lines.last == "shipped files: \(CLITests.root.path)")
    }

    @Test func installedBinaryReadsPrefixShareHark() throws {
        let (prefix, binary) = try Self.installedBinary(withShare: true)
        defer { try? FileManager.default.removeItem(at: prefix) }
        let share = prefix.appendingPathComponent("share/hark")
        // From the prefix itself: no Intents/ in the working directory or above the binary, only share/hark.
        let version = try Self.run(["--version"], path: binary.deletingLastPathComponent(), in: prefix)
        #expect(version.status == 0, "\(version.stderr)")
        #expect(version.stdout.hasSuffix("shipped files: \(share.path)\n"), "\(version.stdout)")
        // The default workspace comes from there too: `parse` needs one and gets share/hark's home.json.
        let parse = try Self.run(["parse", "turn on the light"], path: binary.deletingLastPathComponent(), in: prefix)
        #expect(parse.status == 0, "\(parse.stderr)")
        #expect(parse.stdout.contains("OnLight"), "\(parse.stdout)")
    }

    @Test func installedBinaryWithoutShareSaysWhereItLooked() throws {
        let (prefix, binary) = try Self.installedBinary(withShare: false)
        defer { try? FileManager.default.removeItem(at: prefix) }
        let r = try Self.run(["--version"], path: binary.deletingLastPathComponent(), in: prefix)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("shipped files: not found (looked in \(prefix.path), \(prefix.path)/bin"), "\(r.stdout)")
        #expect(r.stdout.contains("\(prefix.path)/share/hark)"), "\(r.stdout)")
        // Without a workspace anywhere, parse is a clear error naming the file, not a crash.
        let parse = try Self.run(["parse", "hello"], path: binary.deletingLastPathComponent(), in: prefix)
        #expect(parse.status != 0)
        #expect(parse.stderr.contains("Intents/home.json"), "\(parse.stderr)")
    }

    @Test func missingShippedMeansAreNamedNotSilentlyReplaced() throws {
        let (prefix, binary) = try Self.installedBinary(withShare: true)
        defer { try? FileManager.default.removeItem(at: prefix) }
        let bin = binary.deletingLastPathComponent()
        let share = prefix.appendingPathComponent("share/hark")
        let clip = prefix.appendingPathComponent("on.wav").path
        let said = try Self.run(["say", "--output", clip, "turn on the light"], path: bin, in: prefix)
        try #require(said.status == 0, "\(said.stderr)")
        // share/hark/Models holds the wake files but not the adapted means: recognising still works, and says what
        // it decodes noise with instead, naming where it looked.
        let without = try Self.run(["recognize", clip], path: bin, in: prefix)
        #expect(without.status == 0, "\(without.stderr)")
        #expect(without.stdout.contains("turn on the light"), "\(without.stdout)")
        for name in ["en-us-noisy.means", "en-us-moderate.means"] {
            #expect(without.stderr.contains("note: Models/\(name) was not found (looked in "), "\(without.stderr)")
        }
        #expect(without.stderr.contains("\(share.path)/Models"), "\(without.stderr)")
        // Saying none is a choice, not something missing.
        let chosen = try Self.run(["recognize", "--noisy-means", "none", "--moderate-means", "none", clip], path: bin, in: prefix)
        #expect(chosen.status == 0 && !chosen.stderr.contains("was not found"), "\(chosen.stderr)")
        // With the files where an installed hark looks, nothing to say.
        for name in ["en-us-noisy.means", "en-us-moderate.means"] {
            try FileManager.default.copyItem(at: CLITests.root.appendingPathComponent("Models/\(name)"),
                                             to: share.appendingPathComponent("Models/\(name)"))
        }
        let with = try Self.run(["recognize", clip], path: bin, in: prefix)
        #expect(with.status == 0 && !with.stderr.contains("was not found"), "\(with.stderr)")
    }
}
