import Foundation
import HarkAudio
import HarkCore
import HarkTestSupport
import Testing

@testable import HarkSpeech

@Suite("Noisy-speech decoding", .serialized)
struct NoisyDecodingTests {
    /// The real recording of "go forward ten meters" with uniform white noise added at `noiseRMS`.
    static func goForward(noiseRMS: Double) throws -> PCMBuffer {
        let clean = try RecognitionFixtures.raw(RecognitionFixtures.recordedSpeech.appendingPathComponent("goforward.raw"))
        var state: UInt64 = 7
        let a = noiseRMS * 3.0.squareRoot()
        let samples = clean.samples.map { x -> Int16 in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let uniform: Double = Double(state >> 11) / 9_007_199_254_740_992 * 2 - 1
            let value: Double = Double(x) + uniform * a
            return Int16(clamping: Int(value.rounded()))
        }
        return PCMBuffer(format: .speech, samples: samples)
    }

    @Test("Clean speech is decoded with the usual settings, speech in loud noise with the noisy-speech ones")
    func chosenByTheEstimate() throws {
        let recognizer = try SpeechRecognizer(workspace: RecognizerTests.robot)
        let clean = try recognizer.recognize(try Self.goForward(noiseRMS: 0))
        #expect(clean.text == "go forward ten meters")
        #expect(!clean.noisyDecoding)
        #expect(try #require(clean.signalToNoise) > 20)

        let noisy = try recognizer.recognize(try Self.goForward(noiseRMS: 600))
        #expect(try #require(noisy.signalToNoise) < 20)
        #expect(noisy.noisyDecoding)
        #expect(noisy.text == "go forward ten meters")
        #expect(noisy.acousticMargin != nil)
    }

    static let shippedMeans = RecognitionFixtures.packageRoot.appendingPathComponent("Models/\(SpeechModel.noisyMeansFileName)")

    @Test("The shipped noisy-room means reach the noisy-speech decoder only")
    func shippedMeans() throws {
        let stock = try SpeechRecognizer(workspace: RecognizerTests.robot)
        let adapted = try SpeechRecognizer(workspace: RecognizerTests.robot, model: SpeechModel(noisyMeans: Self.shippedMeans))
        let clean = try Self.goForward(noiseRMS: 0), noisy = try Self.goForward(noiseRMS: 600)

        // Clean speech goes to the usual decoder, which keeps the model's own means: the very same result.
        let (cleanStock, cleanAdapted) = (try stock.recognize(clean), try adapted.recognize(clean))
        #expect(!cleanAdapted.noisyDecoding && cleanAdapted.text == cleanStock.text)
        #expect(cleanAdapted.acousticMargin == cleanStock.acousticMargin)

        // Noisy speech goes to the noisy decoder, which scores it with the adapted means: same words, other scores.
        let (noisyStock, noisyAdapted) = (try stock.recognize(noisy), try adapted.recognize(noisy))
        #expect(noisyAdapted.noisyDecoding && noisyAdapted.text == "go forward ten meters")
        #expect(noisyAdapted.acousticMargin != noisyStock.acousticMargin, "the means file changed nothing")
    }

    @Test("Utterances decoded with the noisy-speech means get that decoder's rejection point; other models keep theirs")
    func rejectionPointWithMeans() throws {
        let strict = RecognitionOptions(noisy: .init(threshold: 20, decoderArguments: RecognitionOptions.NoisyDecoding.standard.decoderArguments,
                                                     confidenceWithNoisyMeans: AcousticConfidence(midpoint: 50, scale: 0.4)))
        let noisy = try Self.goForward(noiseRMS: 600), clean = try Self.goForward(noiseRMS: 0)
        let withMeans = try SpeechRecognizer(workspace: RecognizerTests.robot, model: SpeechModel(noisyMeans: Self.shippedMeans), options: strict)
        let heard = try withMeans.recognize(noisy)
        #expect(heard.noisyDecoding && heard.acousticConfidence < 0.01, "margin \(String(describing: heard.acousticMargin)) should be far below 50")
        // Clean speech goes to the usual decoder and its usual rejection point.
        #expect(try withMeans.recognize(clean).acousticConfidence > 0.5)
        // Without the means the noisy decoder is the stock model's, and so is its rejection point.
        let withoutMeans = try SpeechRecognizer(workspace: RecognizerTests.robot, options: strict)
        #expect(try withoutMeans.recognize(noisy).acousticConfidence > 0.5)
    }

    @Test("With the noisy-speech means the words' margin judges too: the lower of the two confidences stands")
    func wordsJudgeWithMeans() throws {
        func options(words: AcousticConfidence?) -> RecognitionOptions {
            let standard = RecognitionOptions.NoisyDecoding.standard
            return RecognitionOptions(noisy: .init(threshold: standard.threshold, decoderArguments: standard.decoderArguments,
                                                   confidenceWithNoisyMeans: standard.confidenceWithNoisyMeans,
                                                   wordsConfidenceWithNoisyMeans: words))
        }
        let model = SpeechModel(noisyMeans: Self.shippedMeans)
        let noisy = try Self.goForward(noiseRMS: 600), clean = try Self.goForward(noiseRMS: 0)
        let alone = try SpeechRecognizer(workspace: RecognizerTests.robot, model: model, options: options(words: nil)).recognize(noisy)
        let utterance = try #require(alone.acousticMargin), words = try #require(alone.speechMargin)
        #expect(alone.noisyDecoding && alone.acousticConfidence == RecognitionOptions.NoisyDecoding.standard.confidenceWithNoisyMeans?.confidence(margin: utterance))
        // A words' point far above the words' margin turns the same command away; one far below changes nothing.
        let strict = try SpeechRecognizer(workspace: RecognizerTests.robot, model: model, options: options(words: .init(midpoint: words + 5, scale: 0.4)))
        #expect(try strict.recognize(noisy).acousticConfidence < 0.01)
        let lenient = try SpeechRecognizer(workspace: RecognizerTests.robot, model: model, options: options(words: .init(midpoint: words - 5, scale: 0.4)))
        #expect(try lenient.recognize(noisy).acousticConfidence == alone.acousticConfidence)
        // Clean speech goes to the usual decoder, which the words' judge does not touch.
        #expect(try strict.recognize(clean).acousticConfidence > 0.5)
        // The shipped setting keeps this command.
        #expect(try SpeechRecognizer(workspace: RecognizerTests.robot, model: model).recognize(noisy).acousticConfidence > 0.5)
    }

    @Test("The noisy-means setting: none, a file, or the shipped means with the stock acoustic model only")
    func meansSetting() {
        let shipped = URL(fileURLWithPath: "/usr/share/hark/Models/en-us-noisy.means")
        let resolve = { (path: String) in URL(fileURLWithPath: "/etc/hark").appendingPathComponent(path) }
        #expect(SpeechModel.means(setting: "none", shipped: shipped, stockAcousticModel: true, resolve: resolve) == nil)
        #expect(SpeechModel.means(setting: "k.means", shipped: shipped, stockAcousticModel: false, resolve: resolve)?.path == "/etc/hark/k.means")
        #expect(SpeechModel.means(setting: nil, shipped: shipped, stockAcousticModel: true, resolve: resolve) == shipped)
        #expect(SpeechModel.means(setting: nil, shipped: shipped, stockAcousticModel: false, resolve: resolve) == nil)
    }

    @Test("A missing or mismatched noisy-speech or moderate-noise means file is an error naming it")
    func badMeans() throws {
        let kinds: [(what: String, model: (URL) -> SpeechModel)] = [
            ("noisy-speech means", { SpeechModel(noisyMeans: $0) }), ("moderate-noise means", { SpeechModel(moderateMeans: $0) }),
        ]
        for (what, model) in kinds {
            let missing = URL(fileURLWithPath: "/nonexistent/some.means")
            let error = caught(SpeechRecognitionError.self) { try SpeechRecognizer(workspace: RecognizerTests.robot, model: model(missing)) }
            #expect(error == .missingModel(what: what, path: missing.path), "\(String(describing: error))")

            let short = FileManager.default.temporaryDirectory.appendingPathComponent("hark-short-\(UUID().uuidString).means")
            try Data(repeating: 0, count: 1000).write(to: short)
            defer { try? FileManager.default.removeItem(at: short) }
            let mismatched = caught(SpeechRecognitionError.self) { try SpeechRecognizer(workspace: RecognizerTests.robot, model: model(short)) }
            guard case let .mismatchedMeans(path, bytes, _, modelBytes)? = mismatched else {
                Issue.record("\(what): expected mismatchedMeans, got \(String(describing: mismatched))")
                continue
            }
            #expect(path == short.path && bytes == 1000 && modelBytes > 1000)
            #expect("\(mismatched!)".hasPrefix(short.path + ": 1000 bytes"))
        }
    }

    @Test("A means file linked into place is judged by the file it names, not by the link")
    func linkedMeans() throws {
        let link = FileManager.default.temporaryDirectory.appendingPathComponent("hark-linked-\(UUID().uuidString).means")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: Self.shippedMeans)
        defer { try? FileManager.default.removeItem(at: link) }
        let noisy = try Self.goForward(noiseRMS: 600)
        let linked = try SpeechRecognizer(workspace: RecognizerTests.robot, model: SpeechModel(noisyMeans: link)).recognize(noisy)
        let direct = try SpeechRecognizer(workspace: RecognizerTests.robot, model: SpeechModel(noisyMeans: Self.shippedMeans)).recognize(noisy)
        #expect(linked.noisyDecoding && linked.text == direct.text && linked.acousticMargin == direct.acousticMargin)
    }

    @Test("Without noisy-speech settings, or with live decoding, every utterance gets the usual decoder")
    func off() throws {
        let noisy = try Self.goForward(noiseRMS: 600)
        let plain = try SpeechRecognizer(workspace: RecognizerTests.robot, options: RecognitionOptions(noisy: nil))
        let heard = try plain.recognize(noisy)
        #expect(!heard.noisyDecoding)
        #expect(heard.signalToNoise != nil)

        let live = try SpeechRecognizer(workspace: RecognizerTests.robot, options: RecognitionOptions(cepstralMean: .live))
        #expect(live.noisyDecoder == nil)
        #expect(try !live.recognize(noisy).noisyDecoding)
    }

    @Test("The threshold decides: the same audio is noisy under a high threshold and not under a low one")
    func threshold() throws {
        let audio = try Self.goForward(noiseRMS: 600)
        let settings = RecognitionOptions.NoisyDecoding.standard.decoderArguments
        let high = try SpeechRecognizer(workspace: RecognizerTests.robot, options: RecognitionOptions(noisy: .init(threshold: 99, decoderArguments: settings)))
        let low = try SpeechRecognizer(workspace: RecognizerTests.robot, options: RecognitionOptions(noisy: .init(threshold: 1, decoderArguments: settings)))
        #expect(try high.recognize(audio).noisyDecoding)
        #expect(try !low.recognize(audio).noisyDecoding)
    }

    @Test("The phone insertion bonus the noisy-speech decoder adds to a path is taken out of its acoustic margin")
    func insertionBonus() throws {
        let recognizer = try SpeechRecognizer(workspace: RecognizerTests.robot)
        let noisy = try #require(recognizer.noisyDecoder)
        func segment(_ word: String) -> PocketSphinxDecoder.Segment {
            PocketSphinxDecoder.Segment(word: word, startFrame: 0, endFrame: 9, acousticScore: 0, languageScore: 0, probability: 0)
        }
        let path = [segment("<sil>"), segment("go"), segment("forward"), segment("<sil>")]
        // go = G OW, forward = F AO R W ER D, two one-phone silences: 10 phones, each worth ln 2 × -lw 6.5.
        #expect(noisy.pronunciation(of: "forward") == "F AO R W ER D")
        let bonus = SpeechRecognizer.insertionBonus(of: path, decoder: noisy)
        #expect(abs(bonus - 10 * log(2) * 6.5) < 1e-6, "\(bonus)")
        #expect(SpeechRecognizer.insertionBonus(of: path, decoder: recognizer.decoder) == 0)
    }
}
