import Foundation
import HarkCore
import HarkDevices
import Testing
@testable import HarkAppliance
import HarkTestSupport

@Suite struct PictureStoreTests {
    static let t0 = Date(timeIntervalSince1970: 1_796_017_212.123)  // 2026-11-30T05:40:12.123Z

    /// A JPEG-shaped byte string (SOI, APP0 marker, payload, EOI), different for each `n`.
    static func jpeg(_ n: Int, size: Int = 64) -> [UInt8] {
        [0xFF, 0xD8, 0xFF, 0xE0] + (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ n) } + [0xFF, 0xD9]
    }

    static func files(in directory: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
    }

    @Test func saveWritesTheFileTheRowAndAnEvent() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let data = DataDirectory(url: dir.url)
        let events = try EventStore(path: data.eventStoreURL)
        let pictures = try PictureStore(directory: data.picturesURL, limit: 10, events: events)
        let turn = try events.beginTurn(source: .voice)
        let bytes = Self.jpeg(1)
        let saved = try pictures.save(jpeg: bytes, width: 640, height: 480, capturedAt: Self.t0, source: "simulated", trigger: "dialog", turn: turn)

        #expect(saved.fileName == "2026-11-30T05-40-12.123Z.jpg")
        #expect(saved.url == data.picturesURL.appendingPathComponent(saved.fileName))
        #expect(try [UInt8](Data(contentsOf: saved.url)) == bytes)
        #expect(saved.bytes == bytes.count && saved.width == 640 && saved.height == 480 && saved.turn == turn)
        #expect(try Self.files(in: data.picturesURL) == [saved.fileName])  // no temporary file left behind
        #expect(try pictures.picture(id: saved.id) == saved)
        #expect(try pictures.list() == [saved])

        let event = try #require(try events.events(kinds: [.picture]).first).event
        #expect(event.turn == turn)
        #expect(event.data["picture"] == .number(Double(saved.id)))
        #expect(event.data["path"] == .string(saved.url.path))
    }

    @Test func savingBeyondTheLimitKeepsTheNewest() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let data = DataDirectory(url: dir.url)
        let events = try EventStore(path: data.eventStoreURL)
        let pictures = try PictureStore(directory: data.picturesURL, limit: 3, events: events)
        var saved: [StoredPicture] = []
        for n in 0..<5 {
            saved.append(try pictures.save(jpeg: Self.jpeg(n), width: 320, height: 240, capturedAt: Self.t0.addingTimeInterval(Double(n)),
                                           source: "simulated", trigger: "button", turn: nil))
        }
        let kept = Array(saved[2...])
        #expect(try pictures.list() == kept.reversed())
        #expect(try pictures.list(limit: 1) == [saved[4]])
        #expect(try Self.files(in: data.picturesURL) == kept.map(\.fileName).sorted())
        for picture in kept { #expect(try [UInt8](Data(contentsOf: picture.url)) == Self.jpeg(saved.firstIndex(of: picture) ?? -1)) }
        #expect(try pictures.picture(id: saved[0].id) == nil)
        // The log still tells of all five.
        #expect(try events.events(kinds: [.picture]).count == 5)
    }

    @Test func aMissingFileDoesNotFailThePrune() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let data = DataDirectory(url: dir.url)
        let events = try EventStore(path: data.eventStoreURL)
        let pictures = try PictureStore(directory: data.picturesURL, limit: 2, events: events)
        let first = try pictures.save(jpeg: Self.jpeg(0), width: 1, height: 1, capturedAt: Self.t0, source: "s", trigger: "t", turn: nil)
        try FileManager.default.removeItem(at: first.url)
        for n in 1...2 {
            try pictures.save(jpeg: Self.jpeg(n), width: 1, height: 1, capturedAt: Self.t0.addingTimeInterval(Double(n)), source: "s", trigger: "t", turn: nil)
        }
        #expect(try pictures.list().count == 2)
        #expect(try pictures.picture(id: first.id) == nil)
        #expect(try events.events(kinds: [.error]).isEmpty)
    }

    @Test func picturesInTheSameMillisecondGetTheirOwnFiles() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let events = try EventStore(path: dir.storeURL)
        let pictures = try PictureStore(directory: dir.url.appendingPathComponent("pictures"), limit: 5, events: events)
        let picture = Picture(jpeg: Self.jpeg(7), width: 2, height: 2, capturedAt: Self.t0, source: "simulated")
        let a = try pictures.save(picture, trigger: "web", turn: nil)
        let b = try pictures.save(picture, trigger: "web", turn: nil)
        #expect(a.fileName == "2026-11-30T05-40-12.123Z.jpg")
        #expect(b.fileName == "2026-11-30T05-40-12.123Z-2.jpg")
        #expect(try [UInt8](Data(contentsOf: b.url)) == Self.jpeg(7))
    }

    @Test func badInputIsRefused() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let events = try EventStore(path: dir.storeURL)
        let directory = dir.url.appendingPathComponent("pictures")
        #expect(throws: PictureStoreError.self) { try PictureStore(directory: directory, limit: 0, events: events) }
        let pictures = try PictureStore(directory: directory, limit: 3, events: events)
        let notJPEG = try #require(caught(PictureStoreError.self) {
            try pictures.save(jpeg: Array("GIF89a...".utf8), width: 1, height: 1, capturedAt: Self.t0, source: "s", trigger: "t", turn: nil)
        })
        #expect(notJPEG.description.contains("not a JPEG"))
        #expect(throws: PictureStoreError.self) {
            try pictures.save(jpeg: Self.jpeg(1), width: 0, height: 480, capturedAt: Self.t0, source: "s", trigger: "t", turn: nil)
        }
        #expect(try Self.files(in: directory).isEmpty)
        #expect(try pictures.list().isEmpty)
    }

    @Test func leftoverTemporaryFilesAreCleanedAtOpen() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let events = try EventStore(path: dir.storeURL)
        let directory = dir.url.appendingPathComponent("pictures")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let leftover = directory.appendingPathComponent(".2026-11-30T05-40-12.123Z.jpg" + PictureStore.temporarySuffix)
        try Data(Self.jpeg(1).prefix(10)).write(to: leftover)
        _ = try PictureStore(directory: directory, limit: 3, events: events)
        #expect(!FileManager.default.fileExists(atPath: leftover.path))
    }
}
