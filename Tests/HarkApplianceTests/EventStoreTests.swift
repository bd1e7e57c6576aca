import CSQLite
import Foundation
import HarkCore
import Testing
@testable import HarkAppliance
import HarkTestSupport

/// A fresh directory under /tmp for one test, removed by `remove()`.
struct TemporaryDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("hark-events-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    var storeURL: URL { url.appendingPathComponent("events.sqlite3") }

    func remove() {
        try? FileManager.default.removeItem(at: url)
    }
}

/// A thread-safe list, for what handlers and threads collect.
final class Collected<T: Sendable>: @unchecked Sendable {
    // @unchecked: `items` is only touched while holding `lock`.
    private let lock = NSLock()
    private var items: [T] = []

    func append(_ item: T) { lock.withLock { items.append(item) } }
    var all: [T] { lock.withLock { items } }
}

@Suite struct EventStoreTests {
    static let t0 = Date(timeIntervalSince1970: 1_796_017_212.123)  // 2026-11-30T05:40:12.123Z

    static func sampleEvents(turn: Int64? = nil) -> [ApplianceEvent] {
        [
            ApplianceEvent(kind: .wake, text: "Wake phrase heard", turn: turn, time: t0),
            ApplianceEvent(kind: .transcript, text: "turn on the light", turn: turn,
                           data: JSONObject([("transcript", "turn on the light"), ("acoustic_confidence", 0.82)]), time: t0.addingTimeInterval(1.5)),
            ApplianceEvent(kind: .intent, text: "OnLight 0.97", turn: turn,
                           data: JSONObject([("intents", [["intent": "OnLight", "confidence": 0.97]])]), time: t0.addingTimeInterval(1.6)),
            ApplianceEvent(kind: .action, text: "light on → on", turn: turn,
                           data: JSONObject([("name", "light"), ("command", "on"), ("result", "on")]), time: t0.addingTimeInterval(1.7)),
            ApplianceEvent(kind: .reply, text: "Light is on", turn: turn, time: t0.addingTimeInterval(2)),
        ]
    }

    @Test func appendedEventsReadBackInOrder() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let store = try EventStore(path: dir.storeURL)
        let events = Self.sampleEvents()
        var ids: [Int64] = []
        for e in events { ids.append(try store.append(e)) }
        #expect(ids == ids.sorted() && Set(ids).count == ids.count)
        let stored = try store.events()
        #expect(stored.map(\.id) == ids)
        #expect(stored.map(\.event) == events)
        #expect(try store.lastEventID() == ids.last)
    }

    @Test func jsonHasTheEnvelopeThenTheData() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let store = try EventStore(path: dir.storeURL)
        // `text` in data collides with the envelope: the envelope wins.
        let event = ApplianceEvent(kind: .device, text: "Light is on", turn: nil,
                                   data: JSONObject([("name", "light"), ("state", "on"), ("text", "shadow")]), time: Self.t0)
        let id = try store.append(event)
        let json = try #require(store.events().first).json
        #expect(json.keys == ["id", "time", "kind", "turn", "text", "name", "state"])
        #expect(json["id"] == .number(Double(id)))
        #expect(json["time"] == "2026-11-30T05:40:12.123Z")
        #expect(json["turn"] == .null)
        #expect(json["text"] == "Light is on")
        #expect(JSONValue.object(json).serialized().hasPrefix(#"{"id":\#(id),"time":"2026-11-30T05:40:12.123Z","kind":"device","turn":null,"#))
        #expect(event.json["id"] == nil)
    }

    @Test func timesAreMillisecondsInUTC() {
        let date = Date(timeIntervalSince1970: 1_796_017_212.1239)
        #expect(ApplianceEvent.iso8601(date) == "2026-11-30T05:40:12.124Z")
        #expect(ApplianceEvent.iso8601(Date(timeIntervalSince1970: -0.5)) == "1969-12-31T23:59:59.500Z")
        #expect(ApplianceEvent(kind: .start, text: "", time: date).time == ApplianceEvent.date(milliseconds: 1_796_017_212_124))
        // Every millisecond of a second survives Date ↔ milliseconds (rounding, not truncation).
        for ms in Int64(1_796_017_212_000)..<1_796_017_213_000 {
            #expect(ApplianceEvent.milliseconds(ApplianceEvent.date(milliseconds: ms)) == ms)
        }
    }

    @Test func sinceAfterIDLimitAndKindFilter() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let store = try EventStore(path: dir.storeURL)
        let events = Self.sampleEvents()
        let ids = try events.map { try store.append($0) }

        let since = try store.events(since: Self.t0.addingTimeInterval(1.6))
        #expect(since.map(\.event.kind) == [.intent, .action, .reply])
        #expect(try store.events(afterID: ids[2]).map(\.id) == Array(ids[3...]))
        #expect(try store.events(limit: 2).map(\.id) == Array(ids[..<2]))
        #expect(try store.events(limit: 0).isEmpty)
        #expect(try store.events(since: Self.t0.addingTimeInterval(1), afterID: ids[1], limit: 1).map(\.id) == [ids[2]])
        #expect(try store.events(kinds: [.reply, .wake]).map(\.event.kind) == [.wake, .reply])
        #expect(try store.latestEvents(limit: 2).map(\.id) == Array(ids[3...]))
        #expect(try store.latestEvents(limit: 2, kinds: [.wake, .transcript, .action]).map(\.event.kind) == [.transcript, .action])
        #expect(try store.events(since: Self.t0.addingTimeInterval(60)).isEmpty)
    }

    @Test func turnsRecordSourceAndOutcome() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let store = try EventStore(path: dir.storeURL)
        let first = try store.beginTurn(source: .voice, at: Self.t0)
        let second = try store.beginTurn(source: .web, at: Self.t0.addingTimeInterval(10))
        #expect(second > first)
        for e in Self.sampleEvents(turn: first) { try store.append(e) }
        let outcome = TurnOutcome(transcript: "turn on the light", acousticConfidence: 0.82, intent: "OnLight", confidence: 0.97,
                                  reply: "Light is on", accepted: true)
        try store.finishTurn(first, outcome: outcome, at: Self.t0.addingTimeInterval(2))

        let turn = try #require(try store.turn(id: first))
        #expect(turn.source == .voice)
        #expect(turn.started == Self.t0)
        #expect(turn.finished == Self.t0.addingTimeInterval(2))
        #expect(turn.outcome == outcome)
        let open = try #require(try store.turn(id: second))
        #expect(open.source == .web && open.finished == nil && open.outcome == nil)
        #expect(try store.turns().map(\.id) == [first, second])
        #expect(try store.turns(limit: 1).map(\.id) == [second])
        #expect(try store.events().allSatisfy { $0.event.turn == first })
        #expect(try store.turn(id: 999) == nil)
        #expect(throws: SQLiteError.self) { try store.finishTurn(999, outcome: TurnOutcome(accepted: false)) }
    }

    @Test func storeRunsInWALWithNormalSync() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let store = try EventStore(path: dir.storeURL)
        try store.append(ApplianceEvent(kind: .start, text: "started"))
        try store.locked { () throws(SQLiteError) in
            #expect(try store.connection.scalar("PRAGMA journal_mode") == .text("wal"))
            #expect(try store.connection.scalar("PRAGMA synchronous") == .integer(1))  // NORMAL
            #expect(try store.connection.scalar("PRAGMA user_version") == .integer(Int64(EventStore.schemaVersion)))
            #expect(try store.connection.scalar("PRAGMA busy_timeout") == .integer(Int64(EventStore.busyTimeoutMilliseconds)))
        }
        #expect(FileManager.default.fileExists(atPath: dir.storeURL.path + "-wal"))
    }

    @Test func eventsPersistAcrossReopen() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let events = Self.sampleEvents()
        do {
            let store = try EventStore(path: dir.storeURL)
            for e in events { try store.append(e) }
        }
        let reopened = try EventStore(path: dir.storeURL)
        #expect(try reopened.events().map(\.event) == events)
        let readOnly = try EventStore(path: dir.storeURL, access: .readOnly)
        #expect(try readOnly.events().map(\.event) == events)
    }

    /// The writer is never closed (as after a crash): a second connection still sees every committed event,
    /// and each sees the other's appends.
    @Test func committedEventsAreVisibleWithoutClosing() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let writer = try EventStore(path: dir.storeURL)
        for e in Self.sampleEvents() { try writer.append(e) }
        let other = try EventStore(path: dir.storeURL)
        #expect(try other.events().count == 5)
        let id = try other.append(ApplianceEvent(kind: .stop, text: "stopped"))
        #expect(try writer.events(afterID: id - 1).map(\.event.kind) == [.stop])
        withExtendedLifetime(writer) {}
    }

    /// A turn's rows share one transaction: another connection (`hark events`) sees none of them until the
    /// batch ends, then all; this process sees them at once. Outside a batch an append is committed on return.
    @Test func aBatchCommitsWhenItEnds() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let writer = try EventStore(path: dir.storeURL)
        let reader = try EventStore(path: dir.storeURL, access: .readOnly)
        writer.beginBatch()
        let turn = try writer.beginTurn(source: .web)
        for e in Self.sampleEvents(turn: turn) { try writer.append(e) }
        #expect(try writer.events().count == 5)
        #expect(try reader.events().isEmpty)
        #expect(try reader.turn(id: turn) == nil)
        try writer.finishTurn(turn, outcome: TurnOutcome(transcript: "turn on the light", acousticConfidence: nil, intent: "OnLight",
                                                         confidence: 0.97, reply: "Light is on", accepted: true))
        try writer.endBatch()
        #expect(try reader.events().count == 5)
        #expect(try reader.turn(id: turn)?.outcome?.reply == "Light is on")
        try writer.append(ApplianceEvent(kind: .stop, text: "stopped"))
        #expect(try reader.events().last?.event.kind == .stop)
    }

    /// Overlapping batches (two turns at once) commit when the last ends; a batch left open (a turn that hangs)
    /// is committed by the timer within `batchMaxDelay`.
    @Test func overlappingBatchesCommitAtTheLastEndAndAnOpenOneWithinTheDelay() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let writer = try EventStore(path: dir.storeURL)
        let reader = try EventStore(path: dir.storeURL, access: .readOnly)
        writer.beginBatch()
        writer.beginBatch()
        try writer.append(ApplianceEvent(kind: .wake, text: "first"))
        try writer.endBatch()
        try writer.append(ApplianceEvent(kind: .wake, text: "second"))
        #expect(try reader.events().isEmpty)
        let opened = Date()
        var seen = 0
        while seen < 2 && Date().timeIntervalSince(opened) < 5 {
            Thread.sleep(forTimeInterval: 0.01)
            seen = try reader.events().count
        }
        #expect(seen == 2)
        // The timer's 100 ms, with room for a loaded machine.
        #expect(Date().timeIntervalSince(opened) < 2)
        // Still inside the (open) batch: the next change opens a new transaction, committed when the batch ends
        // (at once, or `commitSpacing` after the timer's commit if that was more recent).
        try writer.append(ApplianceEvent(kind: .wake, text: "third"))
        try writer.endBatch()
        let ended = Date()
        while try reader.events().count < 3 && Date().timeIntervalSince(ended) < 5 { Thread.sleep(forTimeInterval: 0.002) }
        #expect(try reader.events().map(\.event.text) == ["first", "second", "third"])
        #expect(Date().timeIntervalSince(ended) < 2)
    }

    /// Group commit: a turn that ends right after another's commit waits for the spaced commit (at most
    /// `commitSpacing`), shared with the turns ending meanwhile; a change outside any turn commits at once,
    /// with whatever was waiting.
    @Test func turnsEndingInQuickSuccessionShareASpacedCommit() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let writer = try EventStore(path: dir.storeURL)
        let reader = try EventStore(path: dir.storeURL, access: .readOnly)
        func turn(_ text: String) throws {
            writer.beginBatch()
            try writer.append(ApplianceEvent(kind: .transcript, text: text))
            try writer.endBatch()
        }
        try turn("one")
        #expect(try reader.events().count == 1, "the first turn commits as it ends")
        let start = Date()
        try turn("two")
        try turn("three")
        let visibleRightAway = try reader.events().count
        while try reader.events().count < 3 && Date().timeIntervalSince(start) < 5 { Thread.sleep(forTimeInterval: 0.001) }
        let waited = Date().timeIntervalSince(start)
        #expect(try reader.events().map(\.event.text) == ["one", "two", "three"])
        if waited < Double(EventStore.commitSpacingMilliseconds) / 1000 {
            // Only a machine slow enough to take 10 ms over two turns sees them at once: then nothing is deferred.
            #expect(visibleRightAway == 1, "turns two and three waited for the spaced commit")
        }
        #expect(waited < 2)
        // Inside the spacing again, but a change outside a turn is committed before append returns, with the
        // turn that was waiting.
        try turn("four")
        try writer.append(ApplianceEvent(kind: .stop, text: "stopped"))
        #expect(try reader.events().map(\.event.text) == ["one", "two", "three", "four", "stopped"])
    }

    /// Deleting pictures inside a batch joins the batch: nothing is visible until it ends, then all of it.
    @Test func deletingPicturesInsideABatchWorks() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let writer = try EventStore(path: dir.storeURL)
        let reader = try EventStore(path: dir.storeURL, access: .readOnly)
        writer.beginBatch()
        let id = try writer.insertPicture(time: Self.t0, fileName: "a.jpg", width: 640, height: 480, bytes: 100, source: "camera",
                                          trigger: "web", turn: nil)
        try writer.append(ApplianceEvent(kind: .picture, text: "a.jpg"))
        try writer.deletePictures(ids: [id])
        #expect(try reader.events().isEmpty)
        #expect(try writer.hasPicture(fileName: "a.jpg") == false)
        try writer.endBatch()
        #expect(try reader.events().count == 1)
        #expect(try reader.hasPicture(fileName: "a.jpg") == false)
        // Outside a batch the deletion commits before it returns.
        let other = try writer.insertPicture(time: Self.t0, fileName: "b.jpg", width: 640, height: 480, bytes: 100, source: "camera",
                                             trigger: "web", turn: nil)
        #expect(try reader.hasPicture(fileName: "b.jpg"))
        try writer.deletePictures(ids: [other])
        #expect(try reader.hasPicture(fileName: "b.jpg") == false)
    }

    /// A child process appends as fast as it can and reports each id once `append` has returned; it is
    /// killed with SIGKILL mid-stream. Every reported id must be in the store afterwards.
    @Test(.enabled(if: CommandLine.arguments.first?.hasSuffix(".xctest") == true,
                   "needs the test bundle as argv[0] to run its child half (swift test on Linux)"))
    func committedEventsSurviveSIGKILL() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let child = Process()
        child.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        child.arguments = ["--testing-library", "swift-testing", "--filter", "crashChildAppendsForever"]
        child.environment = ProcessInfo.processInfo.environment.merging(["HARK_EVENTS_CHILD_STORE": dir.storeURL.path]) { $1 }
        let output = Pipe()
        child.standardOutput = output
        child.standardError = FileHandle.nullDevice
        try child.run()

        var reported: [Int64] = []
        var pending = ""
        let handle = output.fileHandleForReading
        while reported.count < 200 {
            let chunk = handle.availableData
            if chunk.isEmpty { break }  // the child ended early: the checks below say so
            pending += String(decoding: chunk, as: UTF8.self)
            while let newline = pending.firstIndex(of: "\n") {
                let line = pending[..<newline]
                pending = String(pending[pending.index(after: newline)...])
                if line.hasPrefix("COMMITTED "), let id = Int64(line.dropFirst("COMMITTED ".count)) { reported.append(id) }
            }
        }
        kill(child.processIdentifier, SIGKILL)
        child.waitUntilExit()
        #expect(child.terminationReason == .uncaughtSignal && child.terminationStatus == SIGKILL,
                "the child was to be killed mid-stream; it ended by itself (\(child.terminationStatus)); args \(CommandLine.arguments)")
        #expect(reported.count >= 200)

        let store = try EventStore(path: dir.storeURL)
        let ids = Set(try store.events().map(\.id))
        #expect(reported.allSatisfy(ids.contains), "lost \(reported.filter { !ids.contains($0) }.count) committed events")
        // The store is usable after the crash.
        #expect(try store.append(ApplianceEvent(kind: .start, text: "restarted")) > (reported.max() ?? 0))
    }

    /// The child half of `committedEventsSurviveSIGKILL`, run only in that child process.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["HARK_EVENTS_CHILD_STORE"] != nil, "runs only as the child of committedEventsSurviveSIGKILL"))
    func crashChildAppendsForever() throws {
        let path = try #require(ProcessInfo.processInfo.environment["HARK_EVENTS_CHILD_STORE"])
        let store = try EventStore(path: URL(fileURLWithPath: path))
        let turn = try store.beginTurn(source: .voice)
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            let id = try store.append(ApplianceEvent(kind: .state, text: "still here", turn: turn))
            FileHandle.standardOutput.write(Data("COMMITTED \(id)\n".utf8))
        }
    }

    @Test func concurrentAppendsFromTwoThreadsAllLand() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let store = try EventStore(path: dir.storeURL)
        let perThread = 300
        let failures = Collected<String>()
        DispatchQueue.concurrentPerform(iterations: 2) { thread in
            for i in 0..<perThread {
                do {
                    try store.append(ApplianceEvent(kind: .state, text: "\(thread) \(i)", data: JSONObject([("thread", .number(Double(thread)))])))
                } catch {
                    failures.append("\(error)")
                }
            }
        }
        #expect(failures.all.isEmpty)
        let events = try store.events()
        #expect(events.count == 2 * perThread)
        #expect(Set(events.map(\.id)).count == events.count)
        for thread in 0..<2 {
            // Each thread's own appends keep their order.
            let mine = events.filter { $0.event.text.hasPrefix("\(thread) ") }.map(\.event.text)
            #expect(mine == (0..<perThread).map { "\(thread) \($0)" })
        }
    }

    @Test func subscribersSeeNewEventsInOrderUntilTheyUnsubscribe() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let store = try EventStore(path: dir.storeURL)
        try store.append(ApplianceEvent(kind: .start, text: "before"))
        let seen = Collected<StoredEvent>()
        let reentrant = Collected<Int>()
        let subscription = store.subscribe { event in
            seen.append(event)
            // A handler may read the store: it does not run under the store's lock.
            if let count = try? store.events().count { reentrant.append(count) }
        }
        var ids: [Int64] = []
        for e in Self.sampleEvents() { ids.append(try store.append(e)) }
        store.waitForSubscribers()
        #expect(seen.all.map(\.id) == ids)
        #expect(seen.all.map(\.event) == Self.sampleEvents())
        #expect(reentrant.all.count == ids.count)

        store.unsubscribe(subscription)
        try store.append(ApplianceEvent(kind: .stop, text: "after"))
        store.waitForSubscribers()
        #expect(seen.all.count == ids.count)
    }

    @Test func nonSQLiteFileIsAClearErrorNamingIt() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        try Data(repeating: 0x41, count: 4096).write(to: dir.storeURL)
        let error = try #require(caught(SQLiteError.self) { try EventStore(path: dir.storeURL) })
        #expect(error.isNotADatabase && error.isBadData)
        #expect(error.path == dir.storeURL.path)
        #expect(error.description.contains(dir.storeURL.path))
        #expect(error.description.contains("not an SQLite database"))
        // Nothing was written over it.
        #expect(try Data(contentsOf: dir.storeURL) == Data(repeating: 0x41, count: 4096))
    }

    @Test func anotherProgramsDatabaseIsRefused() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        do {
            let other = try SQLiteConnection(path: dir.storeURL.path)
            try other.execute("CREATE TABLE recipes (name TEXT)")
        }
        let error = try #require(caught(SQLiteError.self) { try EventStore(path: dir.storeURL) })
        #expect(error.description.contains("not a Hark event store"))
        #expect(error.isBadData)
    }

    @Test func newerSchemaIsRefused() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        do {
            let store = try EventStore(path: dir.storeURL)
            try store.locked { () throws(SQLiteError) in try store.connection.execute("PRAGMA user_version = 99") }
        }
        let error = try #require(caught(SQLiteError.self) { try EventStore(path: dir.storeURL) })
        #expect(error.description.contains("newer Hark"))
        #expect(throws: SQLiteError.self) { try EventStore(path: dir.storeURL, access: .readOnly) }
    }

    @Test func badRowsAreErrorsNotDefaults() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let store = try EventStore(path: dir.storeURL)
        try store.locked { () throws(SQLiteError) in
            try store.connection.execute("INSERT INTO events (time, kind, text, data) VALUES (0, 'teleport', 'x', '{}')")
        }
        let error = try #require(caught(SQLiteError.self) { try store.events() })
        #expect(error.description.contains("teleport"))
        try store.locked { () throws(SQLiteError) in
            try store.connection.execute("UPDATE events SET kind = 'wake', data = '{\"unterminated'")
        }
        let jsonError = try #require(caught(SQLiteError.self) { try store.events() })
        #expect(jsonError.description.contains("not valid JSON"))
    }

    @Test func readOnlyAccessCreatesNothing() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let missing = dir.url.appendingPathComponent("sub/events.sqlite3")
        let error = try #require(caught(SQLiteError.self) { try EventStore(path: missing, access: .readOnly) })
        #expect(error.description.contains(missing.path))
        #expect(!FileManager.default.fileExists(atPath: dir.url.appendingPathComponent("sub").path))
    }

    @Test func directoryThatCannotBeCreatedIsNamed() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let file = dir.url.appendingPathComponent("plain-file")
        try Data("x".utf8).write(to: file)
        let path = file.appendingPathComponent("data/events.sqlite3")
        let error = try #require(caught(SQLiteError.self) { try EventStore(path: path) })
        #expect(error.description.contains(file.appendingPathComponent("data").path))
    }

    /// A directory the process may not write. As root (CI, this VM) permission bits do not stop us, so the
    /// test drops this thread's file-system user id to `nobody` with `setfsuid(2)`, which also drops the
    /// capability to override file permissions, for this thread only, and restores it afterwards.
    @Test func readOnlyDirectoryIsAClearError() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let locked = dir.url.appendingPathComponent("locked", isDirectory: true)
        try FileManager.default.createDirectory(at: locked, withIntermediateDirectories: true)
        #expect(chmod(locked.path, 0o555) == 0)
        defer { chmod(locked.path, 0o755) }
        let path = locked.appendingPathComponent("events.sqlite3")

        let result: Result<EventStore, SQLiteError>
        if geteuid() == 0 {
            let setfsuid = try #require(Self.setfsuid, "setfsuid not found in the C library")
            _ = setfsuid(65534)
            result = Result { () throws(SQLiteError) in try EventStore(path: path) }
            _ = setfsuid(0)
        } else {
            result = Result { () throws(SQLiteError) in try EventStore(path: path) }
        }
        guard case .failure(let error) = result else {
            Issue.record("opening a store in a read-only directory succeeded")
            return
        }
        #expect(error.description.contains("\(locked.path) is not writable"), "\(error)")
    }

    /// `setfsuid` (not exported by Swift's Glibc module), looked up in the C library.
    static let setfsuid: (@convention(c) (UInt32) -> Int32)? = {
        guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "setfsuid") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (UInt32) -> Int32).self)
    }()

    @Test(arguments: [
        ("10m", -600.0), ("2h", -7_200), ("1d", -86_400), ("90s", -90), ("1w", -604_800), ("0m", 0),
    ])
    func relativeSinceIsAnAge(text: String, offset: Double) {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(EventStore.parseSince(text, now: now) == now.addingTimeInterval(offset))
    }

    @Test(arguments: [
        ("2026-11-30T05:00:00Z", 1_796_014_800.0), ("2026-11-30t05:00:00z", 1_796_014_800), ("2026-11-30T05:00:00.250Z", 1_796_014_800.25),
        ("2026-11-30T06:00:00+01:00", 1_796_014_800), ("2026-11-30T00:30-0430", 1_796_014_800),
        // No zone: local time, here fixed to UTC+2.
        ("2026-11-30 07:00", 1_796_014_800), ("2026-11-30 07:00:00", 1_796_014_800), ("2026-11-30", 1_795_989_600),
    ])
    func absoluteSinceIsISO8601(text: String, expected: Double) throws {
        let zone = try #require(TimeZone(secondsFromGMT: 7_200))
        #expect(EventStore.parseSince(text, timeZone: zone) == Date(timeIntervalSince1970: expected))
    }

    @Test(arguments: ["", "yesterday", "10", "m", "-5m", "+5m", "10y", "1.5h", "2026-02-30", "2026-11-30 25:00", "2026-11-30T05:61",
                      "2026-11-30Z", "26-11-30", "2026-11-30T05:00:00+25:00", "2026-11-30 05:00 extra"])
    func badSinceIsRejected(text: String) {
        #expect(EventStore.parseSince(text) == nil)
    }

    @Test func dataDirectoryFollowsTheEnvironment() {
        let home = URL(fileURLWithPath: "/home/pi")
        #expect(DataDirectory.resolve(environment: ["HARK_DATA": "/srv/hark", "XDG_DATA_HOME": "/x"], home: home).url.path == "/srv/hark")
        #expect(DataDirectory.resolve(environment: ["HARK_DATA": "", "XDG_DATA_HOME": "/x"], home: home).url.path == "/x/hark")
        #expect(DataDirectory.resolve(environment: ["XDG_DATA_HOME": "relative"], home: home).url.path == "/home/pi/.local/share/hark")
        let standard = DataDirectory.resolve(environment: [:], home: home)
        #expect(standard.url.path == "/home/pi/.local/share/hark")
        #expect(standard.eventStoreURL.path == "/home/pi/.local/share/hark/events.sqlite3")
        #expect(standard.picturesURL.path == "/home/pi/.local/share/hark/pictures")
    }

    @Test func homeIsTakenFromTheEnvironment() {
        #expect(DataDirectory.home(environment: ["HOME": "/tmp/somebody"]).path == "/tmp/somebody")
        // Unset, empty or relative: the password database's entry, never the relative path.
        for environment in [[:], ["HOME": ""], ["HOME": "relative/home"]] {
            #expect(DataDirectory.home(environment: environment).path.hasPrefix("/"))
        }
    }
}
