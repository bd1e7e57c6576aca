import Testing
import Foundation
@testable import HarkAudio
import HarkTestSupport

/// The voicing rule of the endpointer: `VoicingDetector` tells a voice's pitch from knocks and hiss, and an
/// utterance followed by a clatter that keeps rising above the noise floor still ends.
@Suite struct VoicingTests {
    static let rate = 16_000

    /// A glottal-like pulse train at `pitch` Hz through a vowel-ish resonance, with amplitude `amplitude`.
    static func vowel(pitch: Double, seconds: Double, amplitude: Double = 8_000) -> PCMBuffer {
        movingVowel(pitch: pitch, depth: 0, seconds: seconds, amplitude: amplitude)
    }

    /// Knocks: every `interval` seconds a burst of white noise decaying over about 40 ms, at peak `amplitude`.
    static func knocks(seconds: Double, interval: Double, amplitude: Int, seed: UInt64) -> PCMBuffer {
        let count = Int(seconds * Double(rate))
        let noise = AudioFixtures.noise(frames: count, amplitude: amplitude, seed: seed).samples
        let period = Int(interval * Double(rate))
        var samples = [Int16](repeating: 0, count: count)
        for i in 0..<count {
            let since = Double(i % period) / Double(rate)
            samples[i] = Int16(clamping: Int(Double(noise[i]) * exp(-since / 0.04)))
        }
        return PCMBuffer(format: .speech, samples: samples)
    }

    /// The detector's strength after each 10 ms frame of `audio`.
    static func strengths(_ audio: PCMBuffer) -> [Double] {
        var detector = VoicingDetector(sampleRate: rate)
        return stride(from: 0, to: audio.frameCount - 159, by: 160).map { start in
            detector.push(audio.samples[start..<(start + 160)])
            return detector.strength()
        }
    }

    static func fraction(_ values: [Double], atLeast threshold: Double) -> Double {
        Double(values.filter { $0 >= threshold }.count) / Double(max(1, values.count))
    }

    @Test(arguments: [85.0, 120.0, 210.0, 320.0])
    func aVoicedSoundReadsAsVoiced(_ pitch: Double) {
        // Skip the first 50 ms, while the history fills.
        let values = Array(Self.strengths(Self.vowel(pitch: pitch, seconds: 0.5)).dropFirst(5))
        #expect(Self.fraction(values, atLeast: 0.9) == 1, "pitch \(pitch) Hz: \(values.prefix(8))")
    }

    @Test func hissKnocksAndSilenceDoNot() {
        let threshold = Endpointer.Configuration().voicingThreshold
        let hiss = Self.strengths(AudioFixtures.noise(frames: Self.rate, amplitude: 4_000, seed: 41)).dropFirst(5)
        #expect(Self.fraction(Array(hiss), atLeast: threshold) < 0.02)
        let knocks = Self.strengths(Self.knocks(seconds: 2, interval: 0.25, amplitude: 12_000, seed: 42)).dropFirst(5)
        #expect(Self.fraction(Array(knocks), atLeast: threshold) < 0.05)
        #expect(Self.strengths(AudioFixtures.silence(seconds: 0.3)).allSatisfy { $0 == -1 })
    }

    @Test func realSpeechIsMostlyVoicedWhereItIsLoud() throws {
        for clip in try EndpointerTests.clips(4) {
            let values = Self.strengths(clip)
            let levels = stride(from: 0, to: clip.frameCount - 159, by: 160).map { Endpointer.level(clip.samples[$0..<($0 + 160)]) }
            let peak = levels.max() ?? 0
            // The loudest stretches of speech are its vowels.
            let loud = values.indices.filter { levels[$0] >= peak - 10 }.map { values[$0] }
            #expect(Self.fraction(loud, atLeast: 0.65) >= 0.6, "\(Self.fraction(loud, atLeast: 0.65))")
        }
    }

    /// Speech, then 3 s of knocks well above the room's floor four times a second (a kitchen after the words).
    static func speechThenClatter(_ clip: PCMBuffer) -> PCMBuffer {
        let room = AudioFixtures.noise(frames: 6 * rate, amplitude: 100, seed: 43)
        let words = EndpointerTests.trimmed(clip)
        let audio = AudioFixtures.concatenated([AudioFixtures.silence(seconds: 1), words, Self.knocks(seconds: 3, interval: 0.25, amplitude: 6_000, seed: 44)])
        return AudioFixtures.mix(audio, room)
    }

    @Test func anUtteranceEndsInClatterThatTheLevelAloneWouldTakeForSpeech() throws {
        for clip in try EndpointerTests.clips(4) {
            let audio = Self.speechThenClatter(clip)
            let wordsEnd = Self.rate + EndpointerTests.trimmed(clip).frameCount

            let endpointer = try Endpointer()
            #expect(try EndpointerTests.run(endpointer, on: audio) == .ended(reason: .trailingSilence))
            // The last speech is in the words (their trimmed end has 0.1 s of quiet), not in the knocks.
            let end = try #require(endpointer.speechEndSample)
            #expect(end <= wordsEnd + Self.rate / 4, "speech end \(end), words end \(wordsEnd)")
            #expect(end >= wordsEnd - Self.rate / 2)

            // Judged by level alone, the knocks keep the utterance going to the end of the input.
            var levelOnly = Endpointer.Configuration()
            levelOnly.voicedHold = 0
            let other = try Endpointer(configuration: levelOnly)
            #expect(try EndpointerTests.run(other, on: audio) == .inSpeech)
        }
    }

    @Test func unvoicedSoundIsJudgedByLevelAlone() throws {
        // 1.5 s of loud hiss (nothing voiced: the rule never arms): it is speech while it lasts, as before, when
        // every utterance is kept (a whisper); by default it has no voice and is dismissed when it ends.
        let room = AudioFixtures.noise(frames: 5 * Self.rate, amplitude: 100, seed: 45)
        let hiss = AudioFixtures.noise(frames: 3 * Self.rate / 2, amplitude: 6_000, seed: 46)
        let audio = AudioFixtures.mix(AudioFixtures.concatenated([AudioFixtures.silence(seconds: 1), hiss, AudioFixtures.silence(seconds: 2.5)]), room)
        var keepAll = Endpointer.Configuration()
        keepAll.minimumVoiced = 0
        let endpointer = try Endpointer(configuration: keepAll)
        #expect(try EndpointerTests.run(endpointer, on: audio) == .ended(reason: .trailingSilence))
        let end = try #require(endpointer.speechEndSample)
        #expect(abs(end - 5 * Self.rate / 2) <= Self.rate / 20, "speech end \(end)")

        let dismissing = try Endpointer()
        #expect(try EndpointerTests.run(dismissing, on: audio) == .waitingForSpeech)
        #expect(dismissing.dismissedUtterances == 1)
        #expect(dismissing.speechStartSample == nil)
        #expect(dismissing.utterance.isEmpty)
    }

    /// A knock 1 s into a quiet room, then `clip`'s words 1.5 s after it, then 1.5 s of the room; and where the words start.
    static func knockThenWords(_ clip: PCMBuffer) -> (audio: PCMBuffer, wordsStart: Int) {
        let words = EndpointerTests.trimmed(clip)
        let knock = Self.knocks(seconds: 0.25, interval: 1, amplitude: 8_000, seed: 47)
        let parts = [AudioFixtures.silence(seconds: 1), knock, AudioFixtures.silence(seconds: 1.5), words, AudioFixtures.silence(seconds: 1.5)]
        let audio = AudioFixtures.concatenated(parts)
        let room = AudioFixtures.noise(frames: audio.frameCount, amplitude: 100, seed: 48)
        return (AudioFixtures.mix(audio, room), Self.rate + knock.frameCount + 3 * Self.rate / 2)
    }

    @Test func aKnockWithoutAVoiceIsDismissedAndTheWordsAfterItAreTheUtterance() throws {
        for clip in try EndpointerTests.clips(4) {
            let (audio, wordsStart) = Self.knockThenWords(clip)
            let endpointer = try Endpointer()
            #expect(try EndpointerTests.run(endpointer, on: audio) == .ended(reason: .trailingSilence))
            #expect(endpointer.dismissedUtterances == 1)
            #expect(endpointer.hasVoice)
            // The utterance is the words, with the usual padding before them (taken from the audio after the knock).
            let start = try #require(endpointer.speechStartSample)
            let padding = Int(endpointer.configuration.leadingPadding * Double(Self.rate))
            #expect(start >= wordsStart - padding - 160 && start <= wordsStart + Self.rate / 10, "start \(start), words \(wordsStart)")
            #expect(endpointer.utterance.frameCount == endpointer.processedSamples - start)
            #expect(Array(endpointer.utterance.samples.prefix(400)) == Array(audio.samples[start..<(start + 400)]))

            // With every utterance kept, the knock is the utterance.
            var keepAll = Endpointer.Configuration()
            keepAll.minimumVoiced = 0
            let keeping = try Endpointer(configuration: keepAll)
            #expect(try EndpointerTests.run(keeping, on: audio) == .ended(reason: .trailingSilence))
            #expect(keeping.dismissedUtterances == 0)
            let knockStart = try #require(keeping.speechStartSample)
            #expect(knockStart < 2 * Self.rate)
        }
    }

    @Test func quietPausesStillEndTheUtteranceAsBefore() throws {
        // In a quiet room the rule changes nothing: the same end with and without it.
        var levelOnly = Endpointer.Configuration()
        levelOnly.voicedHold = 0
        for clip in try EndpointerTests.clips(6) {
            let audio = AudioFixtures.concatenated([AudioFixtures.silence(seconds: 0.5), clip, AudioFixtures.silence(seconds: 1.5)])
            let with = try Endpointer(), without = try Endpointer(configuration: levelOnly)
            #expect(try EndpointerTests.run(with, on: audio) == .ended(reason: .trailingSilence))
            #expect(try EndpointerTests.run(without, on: audio) == .ended(reason: .trailingSilence))
            #expect(with.speechStartSample == without.speechStartSample)
            #expect(abs((with.speechEndSample ?? 0) - (without.speechEndSample ?? 0)) <= Self.rate / 2)
        }
    }

    /// `vowel` at a pitch that moves as a voice's does: `depth` (relative) of vibrato at 5 Hz around `pitch` (0: a
    /// steady pitch). The resonance is a two-pole filter at 700 Hz (an open vowel's first formant).
    static func movingVowel(pitch: Double, depth: Double, seconds: Double, amplitude: Double = 8_000) -> PCMBuffer {
        let count = Int(seconds * Double(rate))
        var samples = [Int16](repeating: 0, count: count)
        var phase = 0.0, y1 = 0.0, y2 = 0.0
        let r = 0.97, theta = 2 * Double.pi * 700 / Double(rate)
        for i in 0..<count {
            let t = Double(i) / Double(rate)
            phase += pitch * (1 + depth * sin(2 * Double.pi * 5 * t)) / Double(rate)
            let pulse: Double = phase >= 1 ? 1 : 0
            if phase >= 1 { phase -= 1 }
            let y = pulse + 2 * r * cos(theta) * y1 - r * r * y2
            y2 = y1
            y1 = y
            samples[i] = Int16(clamping: Int(y * amplitude / 12))
        }
        return PCMBuffer(format: .speech, samples: samples)
    }

    /// A chime: 880 Hz and its octave, decaying over 0.4 s.
    static func chime(seconds: Double) -> PCMBuffer {
        PCMBuffer(format: .speech, samples: TestSounds.chime(seconds: seconds, sampleRate: rate))
    }

    @Test func aToneWhosePitchHoldsIsDismissedAndAMovingPitchIsKept() throws {
        let room = AudioFixtures.noise(frames: 4 * Self.rate, amplitude: 100, seed: 49)
        func heard(_ sound: PCMBuffer, _ configuration: Endpointer.Configuration = Endpointer.Configuration()) throws -> Endpointer {
            let audio = AudioFixtures.mix(AudioFixtures.concatenated([AudioFixtures.silence(seconds: 1), sound, AudioFixtures.silence(seconds: 2.4)]), room)
            let endpointer = try Endpointer(configuration: configuration)
            _ = try EndpointerTests.run(endpointer, on: audio)
            return endpointer
        }
        // A chime: a pitch held for 0.6 s. Voiced throughout, but no voice.
        let chime = try heard(Self.chime(seconds: 0.6))
        #expect(chime.decision == .waitingForSpeech && chime.dismissedUtterances == 1)
        // The same pitch with a 3 % vibrato moves from frame to frame as a voice's does: an utterance.
        let sung = try heard(Self.movingVowel(pitch: 180, depth: 0.03, seconds: 0.6))
        #expect(sung.decision == .ended(reason: .trailingSilence) && sung.dismissedUtterances == 0)
        // Without the rule the chime is an utterance.
        var noRule = Endpointer.Configuration()
        noRule.steadyPitchShare = nil
        let kept = try heard(Self.chime(seconds: 0.6), noRule)
        #expect(kept.decision == .ended(reason: .trailingSilence) && kept.dismissedUtterances == 0)
        // A minimum of 0 keeps every utterance, tones too.
        var keepAll = Endpointer.Configuration()
        keepAll.minimumVoiced = 0
        let all = try heard(Self.chime(seconds: 0.6), keepAll)
        #expect(all.decision == .ended(reason: .trailingSilence) && all.dismissedUtterances == 0)
    }

    @Test func aWholeRecordingOfOnlyAKnockOrAChimeIsNoise() throws {
        let room = AudioFixtures.noise(frames: 3 * Self.rate, amplitude: 100, seed: 50)
        func inRoom(_ sound: PCMBuffer) -> PCMBuffer {
            let audio = AudioFixtures.concatenated([AudioFixtures.silence(seconds: 0.5), sound, AudioFixtures.silence(seconds: 1)])
            return AudioFixtures.mix(audio, PCMBuffer(format: .speech, samples: Array(room.samples.prefix(audio.frameCount))))
        }
        #expect(try Endpointer.heardOnlyNoise(inRoom(Self.knocks(seconds: 0.25, interval: 1, amplitude: 8_000, seed: 51))))
        #expect(try Endpointer.heardOnlyNoise(inRoom(Self.chime(seconds: 0.6))))
        // Cut off by the end of the recording, as a client's own voice detector may cut it: still a chime.
        #expect(try Endpointer.heardOnlyNoise(AudioFixtures.concatenated([AudioFixtures.silence(seconds: 0.5), Self.chime(seconds: 0.6)])))
        for clip in try EndpointerTests.clips(2) {
            #expect(try !Endpointer.heardOnlyNoise(inRoom(clip)))
            #expect(try !Endpointer.heardOnlyNoise(Self.knockThenWords(clip).audio))
        }
        // Nothing found is not judged, and the rule off keeps every sound.
        #expect(try !Endpointer.heardOnlyNoise(AudioFixtures.silence(seconds: 2)))
        var keepAll = Endpointer.Configuration()
        keepAll.minimumVoiced = 0
        #expect(try !Endpointer.heardOnlyNoise(inRoom(Self.chime(seconds: 0.6)), configuration: keepAll))
        #expect(throws: PCMFormatError.self) { try Endpointer.heardOnlyNoise(PCMBuffer(format: PCMFormat(sampleRate: 8_000, channels: 1))) }
    }

    @Test func rejectsAnUnworkableVoicingSetting() {
        for (hold, threshold) in [(-0.1, 0.65), (0.2, 0.0), (0.2, 1.5)] {
            var config = Endpointer.Configuration()
            config.voicedHold = hold
            config.voicingThreshold = threshold
            #expect(throws: Endpointer.ConfigurationError.self) { try Endpointer(configuration: config) }
            #expect(config.problem?.contains(hold < 0 ? "voicedHold" : "voicingThreshold") == true)
        }
        var share = Endpointer.Configuration()
        share.steadyPitchShare = 1.5
        #expect(throws: Endpointer.ConfigurationError.self) { try Endpointer(configuration: share) }
        #expect(share.problem?.contains("steadyPitchShare") == true)
        var negative = Endpointer.Configuration()
        negative.minimumVoiced = -0.1
        #expect(throws: Endpointer.ConfigurationError.self) { try Endpointer(configuration: negative) }
        #expect(negative.problem?.contains("minimumVoiced") == true)
    }
}
