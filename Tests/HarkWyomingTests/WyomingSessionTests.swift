import Foundation
import HarkAudio
import HarkCore
import HarkSpeech
import Testing

@testable import HarkWyoming

/// A session fed events directly (no socket): the intent and tts services, audio conversion, sentence
/// splitting, and the errors a client's mistakes get.
@Suite("Wyoming session")
struct WyomingSessionTests {
    static let workspace: Workspace = {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Intents/home.json")
        do { return try Workspace.load(from: url) } catch { fatalError("\(url.path): \(error)") }
    }()

    /// What a session sent. `@unchecked Sendable`: `events` is only touched under `lock`.
    final class Recorder: @unchecked Sendable {
        private let lock = NSLock()
        private var events: [WyomingEvent] = []
        func append(_ event: WyomingEvent) { lock.withLock { events.append(event) } }
        func take() -> [WyomingEvent] { lock.withLock { defer { events.removeAll() }; return events } }
    }

    /// A session with intents and speech synthesis, and what it sent.
    final class Probe {
        let recorder = Recorder()
        lazy var session: WyomingSession = {
            let services = WyomingServices(
                tts: try? WyomingServices.TTS(synthesizer: SpeechSynthesizer(), voices: SpeechSynthesizer.availableVoices()),
                intent: WyomingServices.Intent(model: "home", matcher: Matcher(workspace: WyomingSessionTests.workspace), threshold: 0.2),
                version: "test")
            let recorder = recorder
            return WyomingSession(services: services, limits: WyomingLimits()) { event throws(WyomingClientGone) in
                recorder.append(event)
            }
        }()

        func handle(_ type: String, _ data: JSONObject = JSONObject(), payload: [UInt8] = []) throws -> [WyomingEvent] {
            _ = recorder.take()
            try session.handle(WyomingEvent(type, data, payload: payload))
            return recorder.take()
        }
    }

    @Test func recognizesIntentsAndEntities() throws {
        let probe = Probe()
        let reply = try #require(try probe.handle("recognize", ["text": "turn the light off"]).first)
        #expect(reply.type == "intent" && reply.data["name"] == "OffLight")
        #expect(reply.data["entities"] == [["name": "device", "value": "light"]])
        #expect(try probe.handle("recognize", ["text": "where is my phone"]).first?.type == "not-recognized")
    }

    @Test("mistakes are error events naming the event and field; the session carries on", arguments: [
        ("recognize", JSONObject(), "recognize.data.text"),
        ("recognize", ["text": 3] as JSONObject, "recognize.data.text"),
        ("audio-start", ["rate": 16000, "width": 2] as JSONObject, "audio-start.data.channels"),
        ("audio-start", ["rate": 5, "width": 2, "channels": 1] as JSONObject, "audio-start.data.rate"),
        ("synthesize", ["text": "hi", "voice": ["name": "zz"]] as JSONObject, "synthesize.data.voice.name"),
        ("synthesize", ["text": "  "] as JSONObject, "synthesize.data.text"),
        ("synthesize-chunk", ["text": "hi"] as JSONObject, "synthesize-start"),
        ("transcribe", JSONObject(), "does not offer asr"),
        ("detect", JSONObject(), "does not offer wake"),
        ("teleport", JSONObject(), "unknown event type \"teleport\""),
    ])
    func errors(type: String, data: JSONObject, mention: String) throws {
        let probe = Probe()
        let reply = try #require(try probe.handle(type, data).first)
        #expect(reply.type == "error")
        #expect(reply.data["text"]?.stringValue?.contains(mention) == true, "\(reply.data)")
        #expect(try probe.handle("ping", ["text": "still here"]).first == WyomingEvent("pong", ["text": "still here"]))
    }

    @Test("streaming synthesis speaks a sentence as soon as it is complete")
    func streamingSynthesis() throws {
        let probe = Probe()
        #expect(try probe.handle("synthesize-start").isEmpty)
        #expect(try probe.handle("synthesize-chunk", ["text": "Hello there"]).isEmpty)
        let first = try probe.handle("synthesize-chunk", ["text": ". How are"])
        #expect(first.first?.type == "audio-start" && first.last?.type == "audio-stop")
        #expect(first.filter { $0.type == "audio-chunk" }.reduce(0) { $0 + $1.payload.count } > 10_000)
        #expect(try probe.handle("synthesize", ["text": "Hello there. How are you"]).isEmpty)
        let rest = try probe.handle("synthesize-stop")
        #expect(rest.map(\.type).filter { $0 != "audio-chunk" } == ["audio-start", "audio-stop", "synthesize-stopped"])
    }

    @Test("sentences end at . ! ? or a newline followed by white space", arguments: [
        ("Hello there. How", "Hello there.", "How"),
        ("Really?! Yes", "Really?!", "Yes"),
        ("one\n two", "one", "two"),
    ])
    func sentences(text: String, sentence: String, rest: String) throws {
        let (s, r) = try #require(WyomingSession.firstSentence(text))
        #expect(s == sentence && r == rest)
    }

    @Test("text without a sentence end is spoken in pieces at the last space within the limit")
    func pieces() throws {
        let (piece, rest) = try #require(WyomingSession.piece(of: "one two three four", limit: 10))
        #expect(piece == "one two" && rest == " three four")
        #expect(WyomingSession.piece(of: "short", limit: 10) == nil)
        #expect(WyomingSession.piece(of: String(repeating: "x", count: 12), limit: 10)?.0.count == 10)
    }

    @Test func noSentenceYet() {
        #expect(WyomingSession.firstSentence("It costs 3.50 dollars") == nil)
        #expect(WyomingSession.firstSentence("Hello.") == nil)
    }

    @Test("audio of any width and channel count becomes 16 kHz mono, frames split across chunks included")
    func conversion() throws {
        // 48 kHz stereo 24-bit: a 1 kHz tone, left channel only at full scale, so the mono mix is half.
        let format = WyomingAudioFormat(rate: 48_000, width: 3, channels: 2)
        var bytes: [UInt8] = []
        for i in 0..<48_000 {
            let value = Int32(sin(Double(i) * 2 * .pi * 1_000 / 48_000) * 8_000_000)
            let u = UInt32(bitPattern: value)
            bytes += [UInt8(u & 0xFF), UInt8((u >> 8) & 0xFF), UInt8((u >> 16) & 0xFF), 0, 0, 0]
        }
        let converter = try AudioStreamConverter(format: format)
        var out: [Int16] = []
        var offset = 0
        for cut in [1, 1000, 4097, 7] where offset < bytes.count {
            var step = cut
            while offset < bytes.count {
                let end = min(bytes.count, offset + step)
                out += try converter.convert(Array(bytes[offset..<end])).samples
                offset = end
                step = cut * 37
            }
        }
        out += try converter.finish().samples
        #expect(abs(out.count - 16_000) < 40)
        let peak = out[4_000..<12_000].map { abs(Int($0)) }.max() ?? 0
        // 8,000,000 / 2^8 = 31,250 at full; half of it from the mix of a silent channel.
        #expect(abs(peak - 15_625) < 800, "peak \(peak)")
    }
}

@Suite("Conversation contexts")
struct ConversationContextsTests {
    @Test("the least recently used conversation is forgotten beyond the capacity")
    func eviction() {
        let contexts = ConversationContexts(capacity: 2)
        contexts.store(["n": 1], for: "a")
        contexts.store(["n": 2], for: "b")
        #expect(contexts.context(for: "a") == ["n": 1])  // a is now the most recent
        contexts.store(["n": 3], for: "c")
        #expect(contexts.context(for: "b") == nil && contexts.context(for: "a") == ["n": 1] && contexts.count == 2)
    }
}
