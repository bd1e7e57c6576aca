import Foundation
import HarkAudio
import HarkCore
@testable import HarkSpeech
import Testing

/// The listener decodes an utterance while the endpointer waits out its trailing silence, and the result is
/// the one decoding the same audio at the end would give (docs/speech.md, "Decoding during the trailing silence").
@Suite("Utterance listener", .serialized)
struct UtteranceListenerTests {
    static let rate = PCMFormat.speech.sampleRate

    static func goForward() throws -> PCMBuffer {
        try RecognitionFixtures.raw(RecognitionFixtures.recordedSpeech.appendingPathComponent("goforward.raw"))
    }

    /// The recording cut where the endpointer hears its speech start and end (without the room before and the
    /// quiet after): spliced onto digital silence, the room's own murmur would be loud against it, and once the
    /// utterance is voiced that murmur, having no pitch, counts as silence (`Endpointer`'s voicing rule).
    static func goForwardUntilItsLastSpeech() throws -> PCMBuffer {
        let recording = try goForward()
        let probe = try Endpointer()
        try probe.process(recording)
        let speechStart = try #require(probe.speechStartSample) + Int(probe.configuration.leadingPadding * Double(rate))
        let speechEnd = try #require(probe.speechEndSample)
        return PCMBuffer(format: .speech, samples: Array(recording.samples[speechStart..<speechEnd]))
    }

    /// `clip` twice, 0.55 s apart (longer than the decoded tail, shorter than the endpointer's trailing silence),
    /// with quiet before and after.
    static func twiceWithAPause(_ clip: PCMBuffer) -> PCMBuffer {
        var stream = quiet(0.5)
        stream.append(clip)
        stream.append(quiet(0.55))
        stream.append(clip)
        stream.append(quiet(1.5))
        return stream
    }

    static func quiet(_ seconds: Double) -> PCMBuffer {
        PCMBuffer(format: .speech, samples: [Int16](repeating: 0, count: Int(seconds * Double(rate))))
    }

    /// Feeds `stream` in 100 ms blocks; returns the transcript, the block that ended the utterance and the first
    /// block after which a decoding was queued.
    static func feed(_ listener: UtteranceListener, _ stream: PCMBuffer) throws -> (Transcript?, end: Int?, firstDecoding: Int?) {
        var firstDecoding: Int?
        let block = rate / 10
        for (index, start) in stride(from: 0, to: stream.samples.count, by: block).enumerated() {
            let samples = Array(stream.samples[start..<min(start + block, stream.samples.count)])
            let transcript = try listener.process(PCMBuffer(format: .speech, samples: samples))
            if firstDecoding == nil, listener.decodingsStarted > 0 { firstDecoding = index }
            if let transcript { return (transcript, index, firstDecoding) }
        }
        return (try listener.finish(), nil, firstDecoding)
    }

    @Test("Decoding starts 0.3 s into the trailing silence, 0.5 s before the endpoint, and its result is the transcript")
    func decodesDuringTheTrailingSilence() throws {
        let recognizer = try SpeechRecognizer(workspace: RecognizerTests.robot)
        let endpointer = try Endpointer()
        let listener = UtteranceListener(recognizer: recognizer, endpointer: endpointer)
        var stream = Self.quiet(0.5)
        stream.append(try Self.goForward())
        stream.append(Self.quiet(1.5))
        let (transcript, end, firstDecoding) = try Self.feed(listener, stream)
        let heard = try #require(transcript)
        #expect(heard.text == "go forward ten meters")
        #expect(listener.endReason == .trailingSilence)
        // The endpointer needs 0.8 s of silence, the decoding 0.3 s: about five 100 ms blocks apart.
        let started = try #require(firstDecoding)
        let ended = try #require(end)
        #expect((4...6).contains(ended - started), "decoding queued after block \(started), endpoint at block \(ended)")
        // One decoding in all: the endpoint took the one already running.
        #expect(listener.decodingsStarted == 1)
        #expect(heard.resultDelayMilliseconds != nil)
        // The decoded audio ends 0.3 s after the last speech, and decoding that audio whole gives the same result.
        let start = try #require(endpointer.speechStartSample)
        let last = try #require(endpointer.speechEndSample)
        let cut = last - start + Int(0.3 * Double(Self.rate))
        #expect(abs(heard.audioSeconds - Double(cut) / Double(Self.rate)) < 0.001)
        let whole = try recognizer.decodeWhole(Array(endpointer.utterance.samples[..<cut]))
        #expect(whole.text == heard.text)
        #expect(whole.acousticMargin == heard.acousticMargin)
        #expect(whole.words == heard.words)
    }

    @Test("Speech that resumes after a pause drops the decoding begun in the pause; the transcript covers both parts")
    func speechAfterAPause() throws {
        let recognizer = try SpeechRecognizer(workspace: RecognizerTests.robot)
        let endpointer = try Endpointer()
        let listener = UtteranceListener(recognizer: recognizer, endpointer: endpointer)
        // The recording without its own trailing quiet, then a pause longer than the decoded tail (0.3 s) and
        // shorter than the endpointer's 0.8 s.
        let clip = try Self.goForwardUntilItsLastSpeech()
        let (transcript, _, _) = try Self.feed(listener, Self.twiceWithAPause(clip))
        let heard = try #require(transcript)
        #expect(listener.decodingsStarted == 2)
        // Both clips and the pause between them were decoded as one utterance.
        #expect(heard.audioSeconds > 2 * clip.duration + 0.5)
        let start = try #require(endpointer.speechStartSample)
        let last = try #require(endpointer.speechEndSample)
        let whole = try recognizer.decodeWhole(Array(endpointer.utterance.samples[..<(last - start + Int(0.3 * Double(Self.rate)))]))
        #expect(whole.text == heard.text && whole.acousticMargin == heard.acousticMargin)
    }

    @Test("With a decoded tail as long as the trailing silence, decoding waits for the endpoint and hears the same words")
    func decodingAtTheEndOnly() throws {
        let recognizer = try SpeechRecognizer(workspace: RecognizerTests.robot)
        let listener = UtteranceListener(recognizer: recognizer, endpointer: try Endpointer(), decodedTail: 0.8)
        var stream = Self.quiet(0.5)
        stream.append(try Self.goForward())
        stream.append(Self.quiet(1.5))
        let (transcript, end, firstDecoding) = try Self.feed(listener, stream)
        #expect(transcript?.text == "go forward ten meters")
        #expect(firstDecoding == end)
        #expect(listener.decodingsStarted == 1)
    }

    @Test("An utterance cut off by the end of the input is decoded whole; a reset drops a decoding in progress")
    func endOfInputAndReset() throws {
        let recognizer = try SpeechRecognizer(workspace: RecognizerTests.robot)
        let listener = UtteranceListener(recognizer: recognizer, endpointer: try Endpointer())
        var stream = Self.quiet(0.5)
        stream.append(try Self.goForward())
        let (transcript, end, _) = try Self.feed(listener, stream)
        #expect(end == nil)
        #expect(transcript?.text == "go forward ten meters")

        // A decoding queued in a pause, then a reset: the next utterance is heard on its own.
        listener.reset()
        var paused = Self.quiet(0.5)
        paused.append(try Self.goForward())
        paused.append(Self.quiet(0.5))
        for start in stride(from: 0, to: paused.samples.count, by: Self.rate / 10) {
            let samples = Array(paused.samples[start..<min(start + Self.rate / 10, paused.samples.count)])
            #expect(try listener.process(PCMBuffer(format: .speech, samples: samples)) == nil)
        }
        #expect(listener.decodingCut != nil)
        listener.reset()
        #expect(listener.decodingCut == nil)
        var next = Self.quiet(0.5)
        next.append(try Self.goForward())
        next.append(Self.quiet(1.5))
        let (again, _, _) = try Self.feed(listener, next)
        #expect(again?.text == "go forward ten meters")
    }

    /// A knock: white noise decaying over about 40 ms, 0.25 s long, peak `amplitude` (no pitch: not a voice).
    static func knock(amplitude: Double = 8_000) -> PCMBuffer {
        var state: UInt64 = 0x2545_F491_4F6C_DD1D
        let samples = (0..<(rate / 4)).map { i -> Int16 in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let unit = Double(state >> 11) / Double(1 << 53) * 2 - 1
            return Int16(unit * amplitude * exp(-Double(i) / Double(rate) / 0.04))
        }
        return PCMBuffer(format: .speech, samples: samples)
    }

    /// Half a second of quiet, a knock, 1.5 s of quiet; with `words`, then "go forward ten meters" and 1.5 s of quiet.
    static func knockStream(words: Bool) throws -> PCMBuffer {
        var stream = quiet(0.5)
        stream.append(knock())
        stream.append(quiet(1.5))
        if words {
            stream.append(try goForward())
            stream.append(quiet(1.5))
        }
        return stream
    }

    @Test("A knock before the words is dismissed without a decoding, and the words are the utterance; a knock alone is nothing")
    func knockBeforeTheWords() throws {
        let recognizer = try SpeechRecognizer(workspace: RecognizerTests.robot)
        let listener = UtteranceListener(recognizer: recognizer, endpointer: try Endpointer())
        let (nothing, end, firstDecoding) = try Self.feed(listener, try Self.knockStream(words: false))
        #expect(nothing == nil && end == nil && firstDecoding == nil)
        #expect(listener.dismissedUtterances == 1)
        #expect(listener.decodingsStarted == 0)

        listener.reset()
        #expect(listener.dismissedUtterances == 0)
        let stream = try Self.knockStream(words: true)
        let (transcript, ended, _) = try Self.feed(listener, stream)
        #expect(ended != nil)
        #expect(transcript?.text == "go forward ten meters")
        #expect(listener.dismissedUtterances == 1)
        // The words' utterance, not the knock's: it starts after the knock.
        let wordsStart = try #require(listener.endpointer.speechStartSample)
        #expect(wordsStart > Int(1.5 * Double(Self.rate)))

        // Every utterance kept (minimumVoiced 0): the knock is what is heard, and it is no command.
        var keepAll = Endpointer.Configuration()
        keepAll.minimumVoiced = 0
        let keeping = UtteranceListener(recognizer: recognizer, endpointer: try Endpointer(configuration: keepAll))
        let (knockHeard, _, _) = try Self.feed(keeping, stream)
        #expect(knockHeard?.text != "go forward ten meters")
        #expect(keeping.dismissedUtterances == 0)
    }

    @Test("decodeWhole needs the batch mean; with a live mean the listener decodes as audio arrives")
    func liveMean() throws {
        let live = try SpeechRecognizer(workspace: RecognizerTests.robot, options: RecognitionOptions(cepstralMean: .live))
        #expect(throws: SpeechRecognitionError.wholeUtteranceNeedsBatchMean) { try live.decodeWhole([0, 0, 0]) }
        let listener = UtteranceListener(recognizer: live, endpointer: try Endpointer())
        var stream = Self.quiet(0.5)
        stream.append(try Self.goForward())
        stream.append(Self.quiet(1.5))
        let (transcript, _, _) = try Self.feed(listener, stream)
        #expect(transcript?.text == "go forward ten meters")
        #expect(listener.decodingsStarted == 0)
    }
}

/// With a streaming mean the listener feeds the recogniser as audio arrives, holds back what lies beyond the
/// decoded tail during a pause, and the result is what decoding the same audio in one go gives
/// (docs/speech.md, "Streaming").
@Suite("Utterance listener, streaming", .serialized)
struct StreamingListenerTests {
    static let rate = PCMFormat.speech.sampleRate

    static func streaming() throws -> SpeechRecognizer {
        try SpeechRecognizer(workspace: RecognizerTests.robot, options: RecognitionOptions(cepstralMean: .defaultStreaming))
    }

    @Test("Audio is decoded as it arrives, held back 0.3 s after the last speech; the result equals one-go decoding")
    func streamsAndHoldsBack() throws {
        let recognizer = try Self.streaming()
        let endpointer = try Endpointer()
        let listener = UtteranceListener(recognizer: recognizer, endpointer: endpointer)
        var stream = UtteranceListenerTests.quiet(0.5)
        stream.append(try UtteranceListenerTests.goForward())
        stream.append(UtteranceListenerTests.quiet(1.5))
        let block = Self.rate / 10
        var heard: Transcript?
        var heldBack = false
        for start in stride(from: 0, to: stream.samples.count, by: block) {
            let samples = Array(stream.samples[start..<min(start + block, stream.samples.count)])
            if let transcript = try listener.process(PCMBuffer(format: .speech, samples: samples)) {
                heard = transcript
                break
            }
            // Inside the trailing silence, past the decoded tail: the recogniser has been fed up to the tail only.
            if let first = endpointer.speechStartSample, let last = endpointer.speechEndSample,
               endpointer.utterance.samples.count > last - first + Int(0.4 * Double(Self.rate)) {
                #expect(listener.streamedSamples == last - first + Int(0.3 * Double(Self.rate)))
                heldBack = true
            }
        }
        #expect(heldBack)
        let transcript = try #require(heard)
        #expect(transcript.text == "go forward ten meters")
        #expect(transcript.acousticMargin != nil)
        #expect(transcript.resultDelayMilliseconds != nil)
        let start = try #require(endpointer.speechStartSample)
        let last = try #require(endpointer.speechEndSample)
        let cut = last - start + Int(0.3 * Double(Self.rate))
        #expect(abs(transcript.audioSeconds - Double(cut) / Double(Self.rate)) < 0.001)
        // The same samples in one block: the same words, times and margins.
        let again = try recognizer.recognize(PCMBuffer(format: .speech, samples: Array(endpointer.utterance.samples[..<cut])))
        #expect(again.text == transcript.text)
        #expect(again.words == transcript.words)
        #expect(again.acousticMargin == transcript.acousticMargin)
    }

    @Test("A knock fed to the recogniser and then dismissed is dropped: the words after it are heard alone")
    func knockThenWords() throws {
        let listener = UtteranceListener(recognizer: try Self.streaming(), endpointer: try Endpointer())
        let (transcript, ended, _) = try UtteranceListenerTests.feed(listener, try UtteranceListenerTests.knockStream(words: true))
        #expect(ended != nil)
        #expect(transcript?.text == "go forward ten meters")
        #expect(listener.dismissedUtterances == 1)
    }

    @Test("Speech after a pause feeds the held-back pause too; a reset drops the utterance in progress")
    func pauseAndReset() throws {
        let recognizer = try Self.streaming()
        let endpointer = try Endpointer()
        let listener = UtteranceListener(recognizer: recognizer, endpointer: endpointer)
        let clip = try UtteranceListenerTests.goForwardUntilItsLastSpeech()

        // An utterance begun, then a reset: nothing of it reaches the next one.
        var partial = UtteranceListenerTests.quiet(0.5)
        partial.append(clip)
        for start in stride(from: 0, to: partial.samples.count, by: Self.rate / 10) {
            let samples = Array(partial.samples[start..<min(start + Self.rate / 10, partial.samples.count)])
            #expect(try listener.process(PCMBuffer(format: .speech, samples: samples)) == nil)
        }
        #expect(listener.streamedSamples > 0)
        listener.reset()
        #expect(listener.streamedSamples == 0)

        let (transcript, _, _) = try UtteranceListenerTests.feed(listener, UtteranceListenerTests.twiceWithAPause(clip))
        let heard = try #require(transcript)
        #expect(heard.audioSeconds > 2 * clip.duration + 0.5)
        let start = try #require(endpointer.speechStartSample)
        let last = try #require(endpointer.speechEndSample)
        let cut = last - start + Int(0.3 * Double(Self.rate))
        let again = try recognizer.recognize(PCMBuffer(format: .speech, samples: Array(endpointer.utterance.samples[..<cut])))
        #expect(again.text == heard.text)
        #expect(again.words == heard.words)
        #expect(again.acousticMargin == heard.acousticMargin)
    }
}
