import Foundation
import Testing

/// The project explains itself: every document the code, the tests, the scripts and the docs cite is in the
/// repository, and `docs/ARCHITECTURE.md` matches `Package.swift` and names files that exist. Comments once
/// cited team notes that lived outside the repository (`docs/STYLE.md` explains the rule); these tests keep
/// that from coming back.
@Suite("Documentation links")
struct DocumentationLinkTests {
    static let root = Fixtures.packageRoot

    /// What is searched for citations, from the package root.
    static let scanned = ["Sources", "Tests", "scripts", "docs", "bench", "deploy", "web", "tests", ".ci", "Makefile", "README.md", "Package.swift"]
    /// Generated or vendored trees that cite nothing of ours (and may not exist).
    static let skippedDirectories: Set = [".build", ".git", "out", "__pycache__", "node_modules", "Data"]
    static let textExtensions: Set = ["swift", "py", "sh", "md", "js", "html", "css", "json", "jsgf", "c", "h", "modulemap", "service", "txt", ""]

    /// A cited document that is not where the citation says.
    struct Citation: Hashable, CustomStringConvertible {
        var file: String
        var line: Int
        var target: String
        var description: String { "\(file):\(line): cites \(target)" }
    }

    // MARK: - The scanner

    /// Root-relative paths to the repository's own Markdown: `docs/…`, `bench/README.md` and the like. Not
    /// preceded by a path character, so `https://host/docs/x.md` and `../shared/docs/X.md` do not count.
    static let repositoryPath = try! NSRegularExpression(
        pattern: #"(?<![A-Za-z0-9_./-])((?:docs|bench|scripts|deploy|Models|Intents|tests|web)/[A-Za-z0-9_./+-]*[A-Za-z0-9_-]\.md)\b"#)
    /// A bare note name in capitals (`STYLE.md`, `FINDINGS.md`): the convention for a project document, which
    /// must then be somewhere in the repository.
    static let bareNote = try! NSRegularExpression(pattern: #"(?<![A-Za-z0-9_./-])([A-Z][A-Z0-9_-]*\.md)\b"#)
    /// A relative Markdown link, `[text](target)`, resolved against the linking file's directory.
    static let markdownLink = try! NSRegularExpression(pattern: #"\]\(([^)\s#:]+)(?:#[^)]*)?\)"#)

    /// The documents `text` (the contents of `file`, a root-relative path) cites, with their line numbers.
    static func citations(in text: String, file: String) -> [(line: Int, target: String, kind: String)] {
        var found: [(Int, String, String)] = []
        for (index, line) in text.components(separatedBy: "\n").enumerated() {
            let range = NSRange(line.startIndex..., in: line)
            func matches(_ regex: NSRegularExpression, _ kind: String) {
                for m in regex.matches(in: line, range: range) {
                    if let r = Range(m.range(at: 1), in: line) { found.append((index + 1, String(line[r]), kind)) }
                }
            }
            matches(repositoryPath, "path")
            matches(bareNote, "note")
            if file.hasSuffix(".md") { matches(markdownLink, "link") }
        }
        return found
    }

    /// The citations in `text` that do not resolve: `files` are the repository's root-relative file paths.
    static func broken(in text: String, file: String, files: Set<String>) -> [Citation] {
        let baseNames = Set(files.map { ($0 as NSString).lastPathComponent })
        let directory = (file as NSString).deletingLastPathComponent
        return citations(in: text, file: file).compactMap { c in
            let ok: Bool
            switch c.kind {
            case "path": ok = c.target.hasPrefix("bench/out/") || files.contains(c.target)  // bench/out/ is generated
            case "note": ok = baseNames.contains(c.target)
            default:
                let resolved = normalized(directory.isEmpty ? c.target : directory + "/" + c.target)
                ok = files.contains(resolved) || files.contains { $0.hasPrefix(resolved + "/") }
            }
            return ok ? nil : Citation(file: file, line: c.line, target: c.target)
        }
    }

    /// `a/./b/../c` → `a/c` (Foundation resolves `..` only in absolute paths).
    static func normalized(_ path: String) -> String {
        var parts: [Substring] = []
        for part in path.split(separator: "/") where part != "." {
            if part == "..", let last = parts.last, last != ".." { parts.removeLast() } else { parts.append(part) }
        }
        return parts.joined(separator: "/")
    }

    /// Every file of the repository under `entries` (root-relative names; all of the root by default),
    /// without build products, benchmark output, virtualenvs and test data.
    static func repositoryFiles(under entries: [String]? = nil) -> [String] {
        var files: [String] = []
        let fm = FileManager.default
        let top = entries ?? ((try? fm.contentsOfDirectory(atPath: root.path)) ?? []).filter { !skippedDirectories.contains($0) }
        for entry in top {
            let url = root.appendingPathComponent(entry)
            var isDirectory: ObjCBool = false
            guard fm.fileExists(atPath: url.path, isDirectory: &isDirectory) else { continue }
            guard isDirectory.boolValue else { files.append(entry); continue }
            guard let walker = fm.enumerator(at: url, includingPropertiesForKeys: [.isDirectoryKey]) else { continue }
            for case let item as URL in walker {
                let name = item.lastPathComponent
                if (try? item.resourceValues(forKeys: [.isDirectoryKey]).isDirectory) == true {
                    if skippedDirectories.contains(name) || name.hasPrefix(".venv") { walker.skipDescendants() }
                    continue
                }
                files.append(entry + "/" + String(item.path.dropFirst(url.path.count + 1)))
            }
        }
        return files
    }

    static func read(_ file: String) -> String? {
        guard textExtensions.contains((file as NSString).pathExtension) || file == "Makefile" else { return nil }
        return try? String(contentsOf: root.appendingPathComponent(file), encoding: .utf8)
    }

    // MARK: - Tests

    @Test("the scanner finds a missing docs/ page, a note kept outside the repository and a broken link")
    func scannerFindsBrokenCitations() {
        let files: Set = ["docs/speech.md", "docs/STYLE.md", "README.md", "deploy/hark.json"]
        let swift = """
            /// Decode whole utterances (FINDINGS.md). Beams: docs/speech.md; style: docs/STYLE.md, STYLE.md.
            /// Measured in docs/nowhere.md, see README.md; https://example.com/docs/x.md is not ours.
            """
        #expect(Self.broken(in: swift, file: "Sources/X/Y.swift", files: files).map(\.description) == [
            "Sources/X/Y.swift:1: cites FINDINGS.md", "Sources/X/Y.swift:2: cites docs/nowhere.md",
        ])
        let markdown = "[the example](../deploy/hark.json), [API](speech.md#decoding), [gone](gone.md), [web](https://x.org/a.md)"
        #expect(Self.broken(in: markdown, file: "docs/web.md", files: files).map(\.target) == ["gone.md"])
        #expect(Self.normalized("docs/../deploy/./hark.json") == "deploy/hark.json")
    }

    @Test("every document cited in the code, tests, scripts, benchmarks and docs is in the repository")
    func citedDocumentsExist() throws {
        let files = Self.repositoryFiles(under: Self.scanned)
        #expect(files.contains("docs/ARCHITECTURE.md") && files.contains("Sources/HarkCore/Grammar/GrammarGraph.swift"))
        #expect(files.count > 300, "the scan found only \(files.count) files under \(Self.root.path)")
        let all = Set(Self.repositoryFiles())
        var broken: [Citation] = []
        var scannedCitations = 0
        // This file is left out: its scanner test cites missing pages on purpose.
        let this = "Tests/HarkCoreTests/" + URL(fileURLWithPath: #filePath).lastPathComponent
        for file in files where file != this {
            guard let text = Self.read(file) else { continue }
            scannedCitations += Self.citations(in: text, file: file).count
            broken += Self.broken(in: text, file: file, files: all)
        }
        #expect(scannedCitations > 50, "only \(scannedCitations) citations found: is the scanner looking at the right files?")
        #expect(broken.isEmpty, "cited but not in the repository:\n\(broken.map(\.description).joined(separator: "\n"))")
    }

    /// `Package.swift`'s non-test targets and their dependencies.
    static func packageTargets(_ manifest: String) throws -> [String: Set<String>] {
        let target = try NSRegularExpression(pattern: #"\.(?:target|executableTarget)\(\s*name:\s*"(\w+)"(?:,\s*dependencies:\s*\[([^\]]*)\])?"#)
        let quoted = try NSRegularExpression(pattern: #""(\w+)""#)
        var targets: [String: Set<String>] = [:]
        for m in target.matches(in: manifest, range: NSRange(manifest.startIndex..., in: manifest)) {
            guard let name = Range(m.range(at: 1), in: manifest).map({ String(manifest[$0]) }) else { continue }
            var dependencies: Set<String> = []
            if let r = Range(m.range(at: 2), in: manifest) {
                let list = String(manifest[r])
                for q in quoted.matches(in: list, range: NSRange(list.startIndex..., in: list)) {
                    if let qr = Range(q.range(at: 1), in: list) { dependencies.insert(String(list[qr])) }
                }
            }
            targets[name] = dependencies
        }
        return targets
    }

    @Test("docs/ARCHITECTURE.md lists every Hark target with the dependencies Package.swift gives it")
    func architectureMatchesPackage() throws {
        let manifest = try String(contentsOf: Self.root.appendingPathComponent("Package.swift"), encoding: .utf8)
        let doc = try String(contentsOf: Self.root.appendingPathComponent("docs/ARCHITECTURE.md"), encoding: .utf8)
        let package = try Self.packageTargets(manifest).filter { $0.key.hasPrefix("Hark") }
        #expect(package["HarkServer"]?.contains("HarkAppliance") == true, "Package.swift was not parsed: \(package)")
        let backticked = try NSRegularExpression(pattern: "`([A-Za-z][A-Za-z0-9]*)`")
        var documented: [String: Set<String>] = [:]
        for line in doc.components(separatedBy: "\n") where line.hasPrefix("| `Hark") {
            let cells = line.split(separator: "|").map { String($0) }
            guard let first = cells.first, let last = cells.last else { continue }
            func names(_ s: String) -> [String] {
                backticked.matches(in: s, range: NSRange(s.startIndex..., in: s)).compactMap { Range($0.range(at: 1), in: s).map { String(s[$0]) } }
            }
            guard let name = names(first).first else { continue }
            documented[name] = Set(names(last))
        }
        #expect(Set(documented.keys) == Set(package.keys), "targets in the table vs Package.swift")
        for (name, dependencies) in package {
            #expect(documented[name] == dependencies, "\(name): the table says \(documented[name]?.sorted() ?? []), Package.swift \(dependencies.sorted())")
        }
    }

    @Test("every file and directory docs/ARCHITECTURE.md names exists")
    func architectureNamesExistingFiles() throws {
        let doc = try String(contentsOf: Self.root.appendingPathComponent("docs/ARCHITECTURE.md"), encoding: .utf8)
        let files = Self.repositoryFiles()
        // Every directory on the way to a file, so `HarkCore/Grammar/` resolves too.
        var paths = Set(files)
        for file in files {
            var dir = (file as NSString).deletingLastPathComponent
            while !dir.isEmpty { paths.insert(dir); dir = (dir as NSString).deletingLastPathComponent }
        }
        let token = try NSRegularExpression(pattern: #"`([A-Za-z][A-Za-z0-9_./*+-]*)`"#)
        var missing: [String] = []
        var checked = 0
        for m in token.matches(in: doc, range: NSRange(doc.startIndex..., in: doc)) {
            guard let r = Range(m.range(at: 1), in: doc) else { continue }
            let name = String(doc[r])
            let isPath = name.contains("/") || [".swift", ".md", ".json", ".js", ".sh", ".py", ".h", ".modulemap"].contains { name.hasSuffix($0) }
            guard isPath else { continue }
            checked += 1
            // A path from the root, from Sources/, or a file name anywhere; `*` matches within one component.
            var trimmed = name
            while trimmed.hasSuffix("/") { trimmed.removeLast() }
            let pattern = "^(?:.*/)?" + NSRegularExpression.escapedPattern(for: trimmed).replacingOccurrences(of: "\\*", with: "[^/]*") + "$"
            let regex = try NSRegularExpression(pattern: pattern)
            let found = paths.contains { regex.firstMatch(in: $0, range: NSRange($0.startIndex..., in: $0)) != nil }
            if !found { missing.append(name) }
        }
        #expect(checked > 40, "only \(checked) file names checked")
        #expect(missing.isEmpty, "docs/ARCHITECTURE.md names files that do not exist: \(missing)")
    }
}
