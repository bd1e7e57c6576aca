import Testing
import Foundation
@testable import HarkAudio
import HarkTestSupport

/// The endpointer on real speech (the speech-to-intent benchmark's clean clips) padded with silence or
/// with low-level noise, scaled down, with mid-sentence pauses, and on audio with no speech at all.
@Suite struct EndpointerTests {
    static let rate = 16_000
    static let frame = 160

    /// The clip's speech core: first and last 10 ms frame within 20 dB of its loudest frame and, when noise
    /// of `noiseLevel` dBFS is added, at least 10 dB above it (quieter speech is masked by the noise).
    static func loudRegion(_ clip: PCMBuffer, noiseLevel: Double = -100) -> Range<Int> {
        let levels = stride(from: 0, to: clip.frameCount - frame, by: frame).map { Endpointer.level(clip.samples[$0..<($0 + frame)]) }
        let peak = levels.max() ?? 0
        let loud = levels.indices.filter { levels[$0] >= max(peak - 20, noiseLevel + 10) }
        return ((loud.first ?? 0) * frame)..<(((loud.last ?? 0) + 1) * frame)
    }

    /// The clip cut to its speech core with 0.1 s either side, so pauses added around it are exact.
    static func trimmed(_ clip: PCMBuffer) -> PCMBuffer {
        let region = loudRegion(clip)
        let lower = max(0, region.lowerBound - rate / 10)
        let upper = min(clip.frameCount, region.upperBound + rate / 10)
        return PCMBuffer(format: clip.format, samples: Array(clip.samples[lower..<upper]))
    }

    static func clips(_ count: Int) throws -> [PCMBuffer] {
        let urls = try AudioFixtures.speechClips(count)
        try #require(urls.count == count, "speech benchmark clips missing under \(AudioFixtures.benchmarks.path)")
        return try urls.map { try AudioFile.readSpeech($0.path) }
    }

    /// Feeds `audio` in blocks of uneven size (so frames straddle buffers); stops once it has ended.
    static func run(_ endpointer: Endpointer, on audio: PCMBuffer, block: Int = 333) throws -> EndpointerDecision {
        let source = BufferedAudioSource(audio)
        var decision = endpointer.decision
        while let buffer = source.read(maxFrames: block), !decision.hasEnded {
            decision = try endpointer.process(buffer)
        }
        return decision
    }

    enum Background: String, CaseIterable { case silence, noise, quiet }

    @Test(arguments: Background.allCases)
    func findsTheUtteranceInPaddedSpeech(_ background: Background) throws {
        let leading = 1.0
        for clip in try Self.clips(8) {
            // Uniform noise of amplitude A has an RMS of A/√3.
            let (speech, noiseAmplitude): (PCMBuffer, Int) = switch background {
            case .silence: (clip, 0)
            case .noise: (clip, 300)
            case .quiet: (AudioFixtures.scaled(clip, by: 0.05), 20)
            }
            var padded = AudioFixtures.concatenated([AudioFixtures.silence(seconds: leading), speech, AudioFixtures.silence(seconds: 2)])
            var noiseLevel = -100.0
            if noiseAmplitude > 0 {
                padded = AudioFixtures.mix(padded, AudioFixtures.noise(frames: padded.frameCount, amplitude: noiseAmplitude, seed: 21))
                noiseLevel = 20 * log10(Double(noiseAmplitude) / 3.0.squareRoot() / 32_768)
            }
            let endpointer = try Endpointer()
            let decision = try Self.run(endpointer, on: padded)
            let offset = Int(leading * Double(Self.rate))
            let loud = Self.loudRegion(speech, noiseLevel: noiseLevel)
            let clipEnd = offset + clip.frameCount
            #expect(decision == .ended(reason: .trailingSilence))
            let start = try #require(endpointer.speechStartSample)
            let end = try #require(endpointer.speechEndSample)
            // The utterance holds all the speech, and did not start in the leading background.
            #expect(start <= offset + loud.lowerBound)
            #expect(start >= offset - Int(endpointer.configuration.leadingPadding * Double(Self.rate)) - Self.frame)
            #expect(end >= offset + loud.upperBound)
            // It ended within the trailing silence after the clip.
            #expect(endpointer.processedSamples <= clipEnd + Int((endpointer.configuration.trailingSilence + 0.5) * Double(Self.rate)))
            #expect(endpointer.utterance.frameCount == endpointer.processedSamples - start)
            #expect(Array(endpointer.utterance.samples.prefix(500)) == Array(padded.samples[start..<(start + 500)]))
        }
    }

    @Test func aHalfSecondPauseMidSentenceDoesNotEndTheUtterance() throws {
        let parts = try Self.clips(4).map(Self.trimmed)
        for (first, second) in zip(parts, parts.dropFirst()) {
            let audio = AudioFixtures.concatenated([AudioFixtures.silence(seconds: 0.5), first, AudioFixtures.silence(seconds: 0.5),
                                                    second, AudioFixtures.silence(seconds: 1.5)])
            let noisy = AudioFixtures.mix(audio, AudioFixtures.noise(frames: audio.frameCount, amplitude: 200, seed: 23))
            for input in [audio, noisy] {
                let endpointer = try Endpointer()
                #expect(try Self.run(endpointer, on: input) == .ended(reason: .trailingSilence))
                let secondStart = Int(0.5 * Double(Self.rate)) + first.frameCount + Int(0.5 * Double(Self.rate))
                #expect(try #require(endpointer.speechEndSample) >= secondStart + Self.loudRegion(second).upperBound)
            }
        }
    }

    @Test func audioWithoutSpeechNeverStartsAnUtterance() throws {
        let seconds = 20.0
        let frames = Int(seconds * Double(Self.rate))
        let inputs = [
            AudioFixtures.silence(seconds: seconds),
            AudioFixtures.noise(frames: frames, amplitude: 40, seed: 31),
            AudioFixtures.noise(frames: frames, amplitude: 3_000, seed: 32),
        ]
        for input in inputs {
            let endpointer = try Endpointer()
            #expect(try Self.run(endpointer, on: input, block: 1_600) == .waitingForSpeech)
            #expect(endpointer.speechStartSample == nil)
            #expect(endpointer.utterance.isEmpty)
        }
    }

    @Test func endsAtTheMaximumLengthWhenSpeechGoesOn() throws {
        var speech = PCMBuffer(format: .speech)
        for clip in try Self.clips(8).map(Self.trimmed) where speech.duration < 14 { speech.append(clip) }
        try #require(speech.duration >= 12)
        let endpointer = try Endpointer()
        #expect(try Self.run(endpointer, on: AudioFixtures.concatenated([AudioFixtures.silence(seconds: 0.5), speech])) == .ended(reason: .maximumLength))
        let length = endpointer.utterance.duration
        #expect(length >= endpointer.configuration.maximumLength && length < endpointer.configuration.maximumLength + 0.05)

        var short = Endpointer.Configuration()
        short.maximumLength = 2
        let shorter = try Endpointer(configuration: short)
        #expect(try Self.run(shorter, on: speech) == .ended(reason: .maximumLength))
        #expect(shorter.utterance.duration < 2.05)
    }

    @Test func resetStartsOverAndTheResultRepeats() throws {
        let clip = try #require(try Self.clips(1).first)
        let audio = AudioFixtures.concatenated([AudioFixtures.silence(seconds: 0.5), clip, AudioFixtures.silence(seconds: 1.5)])
        var config = Endpointer.Configuration()
        config.frameDuration = 0.02
        let endpointer = try Endpointer(configuration: config)
        let first = try Self.run(endpointer, on: audio, block: 320)
        let firstStart = endpointer.speechStartSample
        let firstUtterance = endpointer.utterance
        // After the end, more audio changes nothing.
        #expect(try endpointer.process(clip) == first)
        endpointer.reset(keepingNoiseFloor: false)
        #expect(endpointer.decision == .waitingForSpeech && endpointer.utterance.isEmpty && endpointer.processedSamples == 0)
        #expect(try Self.run(endpointer, on: audio, block: 1_000) == first)
        #expect(endpointer.speechStartSample == firstStart)
        #expect(endpointer.utterance == firstUtterance)
    }

    @Test func rejectsAnUnworkableConfigurationAndTheWrongRate() throws {
        var config = Endpointer.Configuration()
        config.frameDuration = 0
        #expect(throws: Endpointer.ConfigurationError.self) { try Endpointer(configuration: config) }
        config = Endpointer.Configuration()
        config.startThreshold = 3
        config.continueThreshold = 6
        let error = try #require(caught(Endpointer.ConfigurationError.self) { try Endpointer(configuration: config) })
        #expect(error.description.contains("continueThreshold"))
        let endpointer = try Endpointer()
        #expect(throws: PCMFormatError.self) { try endpointer.process(AudioFixtures.silence(seconds: 0.1, format: PCMFormat(sampleRate: 8_000, channels: 1))) }
    }

    /// After a wake phrase the command can start at once: with the room's floor learnt while idle
    /// (`observeBackground`), speech that starts in the very first frame is found and ended on its silence.
    @Test func backgroundObservedWhileIdleLetsSpeechStartImmediately() throws {
        let clip = Self.trimmed(try Self.clips(1)[0])
        let room = AudioFixtures.noise(frames: Self.rate, amplitude: 200, seed: 5)
        let command = AudioFixtures.mix(AudioFixtures.concatenated([clip, AudioFixtures.silence(seconds: 2)]),
                                        AudioFixtures.noise(frames: clip.frameCount + 2 * Self.rate, amplitude: 200, seed: 6))
        let primed = try Endpointer()
        try primed.observeBackground(room)
        #expect(primed.decision == .waitingForSpeech)
        let decision = try Self.run(primed, on: command)
        #expect(decision == .ended(reason: .trailingSilence))
        let start = try #require(primed.speechStartSample)
        #expect(start < Self.rate / 5, "speech found \(start) samples in")
    }
}
