import Foundation
import Testing
@testable import HarkAppliance

/// The event log and pictures are private to the user Hark runs as, whatever the umask, and an older Hark's
/// readable files are tightened when opened.
@Suite(.serialized) struct PrivateFilesTests {
    static func mode(_ path: String) -> Int {
        var info = stat()
        return stat(path, &info) == 0 ? Int(info.st_mode & 0o777) : -1
    }

    /// Under the usual umask (022), which would make them 0644 and 0755. (The umask is process-wide and the tests
    /// run in parallel, so it is not changed here.)
    @Test func newStoresAreCreatedPrivate() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let data = DataDirectory(url: dir.url.appendingPathComponent("data"))
        let events = try EventStore(path: data.eventStoreURL)
        try events.append(ApplianceEvent(kind: .start, text: "started"))
        let pictures = try PictureStore(directory: data.picturesURL, limit: 10, events: events)
        let saved = try pictures.save(jpeg: PictureStoreTests.jpeg(1), width: 8, height: 8, capturedAt: Date(), source: "test", trigger: "test", turn: nil)
        #expect(Self.mode(data.url.path) == 0o700)
        #expect(Self.mode(data.picturesURL.path) == 0o700)
        #expect(Self.mode(saved.url.path) == 0o600)
        for suffix in ["", "-wal", "-shm"] {
            let path = data.eventStoreURL.path + suffix
            #expect(Self.mode(path) == 0o600, "\(path)")
        }
    }

    @Test func anOlderHarksReadableFilesAreTightened() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let data = DataDirectory(url: dir.url.appendingPathComponent("data"))
        do {
            let events = try EventStore(path: data.eventStoreURL)
            try events.append(ApplianceEvent(kind: .start, text: "started"))
        }
        try FileManager.default.createDirectory(at: data.picturesURL, withIntermediateDirectories: true)
        chmod(data.url.path, 0o755)
        chmod(data.picturesURL.path, 0o755)
        chmod(data.eventStoreURL.path, 0o644)
        let events = try EventStore(path: data.eventStoreURL)
        _ = try PictureStore(directory: data.picturesURL, limit: 10, events: events)
        #expect(Self.mode(data.url.path) == 0o700)
        #expect(Self.mode(data.picturesURL.path) == 0o700)
        #expect(Self.mode(data.eventStoreURL.path) == 0o600)
        // Reading (`hark events`) changes nothing.
        chmod(data.eventStoreURL.path, 0o640)
        _ = try EventStore(path: data.eventStoreURL, access: .readOnly)
        #expect(Self.mode(data.eventStoreURL.path) == 0o640)
    }
}
