import Foundation
import HarkAudio
import HarkCore
import HarkTestSupport
import Testing

@testable import HarkSpeech

/// The third decoder (`RecognitionOptions.ModerateDecoding`): speech in moderate noise, between the noisy-speech
/// threshold and `below`, decoded with the usual settings and the shipped moderate-noise means.
@Suite("Moderate-noise decoding", .serialized)
struct ModerateDecodingTests {
    static let models = RecognitionFixtures.packageRoot.appendingPathComponent("Models")
    static let shipped = SpeechModel(
        noisyMeans: models.appendingPathComponent(SpeechModel.noisyMeansFileName),
        moderateMeans: models.appendingPathComponent(SpeechModel.moderateMeansFileName))
    /// "go forward ten meters" with white noise an SNR estimate between 20 and 40 dB reads (checked below).
    static let moderateRMS = 60.0

    /// The recording with a second of digital silence either side, which the estimate reads as clean (the recording
    /// alone reads 33 dB: its quietest tenth is still speech, as for continuous read speech, which reads 22–26 dB).
    static func quiet() throws -> PCMBuffer {
        let speech = try NoisyDecodingTests.goForward(noiseRMS: 0)
        let second = [Int16](repeating: 0, count: 16_000)
        return PCMBuffer(format: .speech, samples: second + speech.samples + second)
    }

    @Test("The estimate chooses the decoder: clean speech the usual one, moderate noise the moderate one, loud noise the noisy one")
    func chosenByTheEstimate() throws {
        let recognizer = try SpeechRecognizer(workspace: RecognizerTests.robot, model: Self.shipped)
        let clean = try recognizer.recognize(try Self.quiet())
        // Unwrapped first: Swift 6.0.3 (Debian 13) rejects a #require nested inside an #expect.
        let cleanEstimate = try #require(clean.signalToNoise)
        #expect(cleanEstimate >= 40)
        #expect(!clean.moderateDecoding && !clean.noisyDecoding && clean.text == "go forward ten meters")

        let moderate = try recognizer.recognize(try NoisyDecodingTests.goForward(noiseRMS: Self.moderateRMS))
        let estimate = try #require(moderate.signalToNoise)
        #expect(estimate >= 20 && estimate < 40, "\(estimate) dB is not moderate noise: change moderateRMS")
        #expect(moderate.moderateDecoding && !moderate.noisyDecoding)
        #expect(moderate.text == "go forward ten meters")
        #expect(moderate.acousticConfidence > 0.5)

        let loud = try recognizer.recognize(try NoisyDecodingTests.goForward(noiseRMS: 600))
        #expect(loud.noisyDecoding && !loud.moderateDecoding)
    }

    @Test("Audio without a noise floor of its own is not sent to the moderate-noise decoder, whatever its estimate")
    func noNoiseFloorNoModerateDecoding() throws {
        let recognizer = try SpeechRecognizer(workspace: RecognizerTests.robot, model: Self.shipped)
        let noisy = try NoisyDecodingTests.goForward(noiseRMS: Self.moderateRMS)
        // 50 ms of digital silence in the middle: as quiet as a synthetic voice's pauses.
        var samples = noisy.samples
        let middle = samples.count / 2
        samples.replaceSubrange(middle..<(middle + 800), with: [Int16](repeating: 0, count: 800))
        #expect(MicrophoneFloor.lacksNoiseFloor(samples) && !MicrophoneFloor.lacksNoiseFloor(noisy.samples))
        let heard = try recognizer.recognize(PCMBuffer(format: .speech, samples: samples))
        let estimate = try #require(heard.signalToNoise)
        #expect(estimate >= 20 && estimate < 40, "\(estimate) dB")
        #expect(!heard.moderateDecoding && !heard.noisyDecoding)
    }

    @Test("The moderate-noise means score the moderate utterances only; clean speech decodes exactly as without them")
    func meansReachOnlyTheirDecoder() throws {
        let without = try SpeechRecognizer(workspace: RecognizerTests.robot, model: SpeechModel(noisyMeans: Self.shipped.noisyMeans))
        let with = try SpeechRecognizer(workspace: RecognizerTests.robot, model: Self.shipped)
        #expect(without.moderateDecoder == nil && with.moderateDecoder != nil)
        let clean = try Self.quiet()
        let (a, b) = (try without.recognize(clean), try with.recognize(clean))
        #expect(a.text == b.text && a.acousticMargin == b.acousticMargin)

        let moderate = try NoisyDecodingTests.goForward(noiseRMS: Self.moderateRMS)
        let (c, d) = (try without.recognize(moderate), try with.recognize(moderate))
        #expect(!c.moderateDecoding && d.moderateDecoding)
        #expect(c.acousticMargin != d.acousticMargin, "the means file changed nothing")
    }

    @Test("Its utterances are judged at its own rejection point")
    func ownRejectionPoint() throws {
        let strict = RecognitionOptions(moderate: .init(below: 40, confidence: AcousticConfidence(midpoint: 50, scale: 0.4)))
        let recognizer = try SpeechRecognizer(workspace: RecognizerTests.robot, model: Self.shipped, options: strict)
        let heard = try recognizer.recognize(try NoisyDecodingTests.goForward(noiseRMS: Self.moderateRMS))
        #expect(heard.moderateDecoding && heard.acousticConfidence < 0.01)
        #expect(try recognizer.recognize(try Self.quiet()).acousticConfidence > 0.5)
        #expect(RecognitionOptions.ModerateDecoding.standard.confidence.midpoint == -2.7)
    }

    @Test("Off, with a live mean, or below a lower bound: no moderate decoding")
    func off() throws {
        let audio = try NoisyDecodingTests.goForward(noiseRMS: Self.moderateRMS)
        let off = try SpeechRecognizer(workspace: RecognizerTests.robot, model: Self.shipped, options: RecognitionOptions(moderate: nil))
        #expect(off.moderateDecoder == nil)
        #expect(try !off.recognize(audio).moderateDecoding)
        let live = try SpeechRecognizer(workspace: RecognizerTests.robot, model: Self.shipped, options: RecognitionOptions(cepstralMean: .live))
        #expect(live.moderateDecoder == nil)
        let low = try SpeechRecognizer(workspace: RecognizerTests.robot, model: Self.shipped,
                                       options: RecognitionOptions(moderate: .init(below: 21, confidence: RecognitionOptions.ModerateDecoding.standard.confidence)))
        let estimate = try #require(try low.recognize(audio).signalToNoise)
        #expect(try low.recognize(audio).moderateDecoding == (estimate < 21))
    }
}
