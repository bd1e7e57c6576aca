import Foundation
import HarkAppliance
import HarkAudio
import HarkCore
import HarkHTTPTestSupport
import HarkSpeech
import HarkTestSupport
import Testing
@testable import HarkServer

/// The browser's push-to-talk hears what the appliance's microphone hears: a press that held only a knock or a chime is
/// "nothing heard", not the nearest command, and a press with words in it is decoded as before.
@Suite("Push-to-talk needs a voice", .serialized)
struct ListenVoiceTests {
    typealias Bench = CompanionAPITests.Bench
    static let rate = PCMFormat.speech.sampleRate

    /// A quiet room: deterministic noise of about ±`amplitude`.
    static func room(seconds: Double, amplitude: Double = 100, seed: UInt64) -> [Int16] {
        var state = seed &* 6_364_136_223_846_793_005 &+ 1
        return (0..<Int(seconds * Double(rate))).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int16((Double(state >> 33) / Double(1 << 31) * 2 - 1) * amplitude)
        }
    }

    /// A knock: a burst of noise dying away in about 40 ms.
    static func knock() -> [Int16] {
        room(seconds: 0.25, amplitude: 8_000, seed: 7).enumerated().map { i, s in Int16(Double(s) * exp(-Double(i) / Double(rate) / 0.04)) }
    }

    /// Presses the button over `sound` (with the room around it), lets go, and returns the socket's answer: the
    /// transcript message, the reply message and whether the reply's WAV came.
    static func press(_ sound: [Int16], bench: Bench) throws -> (transcript: JSONValue, reply: JSONValue, wav: Bool) {
        var audio = room(seconds: 0.5, seed: 1) + sound + room(seconds: 0.8, seed: 2)
        // The room goes on under the sound too.
        let under = room(seconds: Double(audio.count) / Double(rate), seed: 3)
        for i in audio.indices { audio[i] = audio[i] &+ under[i] / 2 }
        let token = try bench.token()
        return try withServer(bench.router) { server in
            let client = try WebSocketTestClient(port: server.port, path: "/api/listen?access_token=\(token)", headers: ["Host": "127.0.0.1"], timeout: 60)
            #expect(try client.receive() == .text(#"{"type":"listening"}"#))
            for start in stride(from: 0, to: audio.count, by: 1_600) {
                try client.send(binary: LittleEndianPCM.bytes(Array(audio[start..<min(audio.count, start + 1_600)])))
            }
            try client.send(text: #"{"type": "end"}"#)
            var transcript: JSONValue = .null, reply: JSONValue = .null
            while true {
                switch try client.receive() {
                case .text(let text):
                    let message = try JSONValue.parse(text)
                    if message["type"]?.stringValue == "transcript" { transcript = message }
                    if message["type"]?.stringValue == "reply" { reply = message }
                    #expect(message["type"]?.stringValue != "error", "\(text)")
                case .binary(let wav):
                    return (transcript, reply, wav.starts(with: Array("RIFF".utf8)))
                default:
                    return (transcript, reply, false)
                }
            }
        }
    }

    static func nothingHeardEvents(_ bench: Bench) throws -> Int {
        try bench.store.events().filter { $0.event.kind == .state && $0.event.text == "Nothing heard" }.count
    }

    @Test func aPressThatHeldOnlyAKnockOrAChimeIsNothingHeard() throws {
        let bench = try CompanionAPIHardeningTests.listeningBench(limits: ListenLimits())
        for (name, sound) in [("knock", Self.knock()), ("chime", TestSounds.chime(seconds: 0.6))] {
            let before = try Self.nothingHeardEvents(bench)
            let answer = try Self.press(sound, bench: bench)
            #expect(answer.transcript["text"]?.stringValue == "", "\(name)")
            #expect(answer.transcript["accepted"] == .bool(false), "\(name)")
            #expect(answer.transcript["reason"]?.stringValue == "noise without a voice", "\(name)")
            #expect(answer.reply["text"]?.stringValue == TurnRunner.apology, "\(name)")
            #expect(answer.reply["response"]?["context"] != nil, "\(name): the page keeps its conversation")
            #expect(answer.wav, "\(name): the page waits for the reply's audio")
            #expect(try Self.nothingHeardEvents(bench) == before + 1, "\(name)")
        }
        // No turn ran: the light was never switched, nothing was logged as a transcript.
        #expect(try bench.store.events().allSatisfy { $0.event.kind != .transcript })
    }

    @Test func aPressWithWordsIsDecodedAfterAKnock() throws {
        let bench = try CompanionAPIHardeningTests.listeningBench(limits: ListenLimits())
        let words = try FreshSpeech.eSpeak("turn on the light").samples
        let answer = try Self.press(Self.knock() + Self.room(seconds: 0.6, seed: 4) + words, bench: bench)
        #expect(answer.transcript["reason"] == nil)
        #expect(answer.transcript["text"]?.stringValue?.isEmpty == false)
        #expect(answer.wav)
        #expect(try Self.nothingHeardEvents(bench) == 0)
        #expect(try bench.store.events().contains { $0.event.kind == .transcript })
    }
}
