import CEspeakNG
import HarkAudio

/// Text to speech with eSpeak NG, in process: 16-bit mono audio at eSpeak's rate (`playbackFormat`, 22 050 Hz).
///
/// A synthesizer is only a set of options (voice, rate, pitch, volume), checked when it is made; the
/// engine behind it is the process's single eSpeak NG (`ESpeakEngine`), so any number of synthesizers
/// may exist and be used from any thread, one synthesis at a time.
///
/// Output is deterministic per process history, not per call: a fresh process speaking the same requests
/// in the same order gives identical bytes, but eSpeak NG 1.51 keeps its pitch-flutter phase in a
/// function-local static (`Flutter_ix` in wavegen.c) that no API resets, so the same text spoken twice in
/// one process differs slightly (measured: "good morning" 14716, 14729, 14733 samples; same words,
/// same envelope; a 2.8 s sentence varied between 62205 and 62846 samples, ±15 ms, over 12 calls).
public struct SpeechSynthesizer: Sendable {
    /// The format speakers are opened in: eSpeak NG's own rate, mono, so speech reaches the sound card
    /// without resampling. `hark run`, `hark serve`, `hark say` and the hardware check all open this one.
    public static let playbackFormat = PCMFormat(sampleRate: 22_050, channels: 1)

    /// Speaking rates eSpeak NG accepts, in words per minute (`espeakRATE_MINIMUM`…`espeakRATE_MAXIMUM`).
    public static let rateRange = Int(espeakRATE_MINIMUM)...Int(espeakRATE_MAXIMUM)
    /// Base pitch: 0…100, 50 is the voice's normal pitch.
    public static let pitchRange = 0...100
    /// Volume: 0 is silence, 100 normal; above 100 eSpeak amplifies and may distort, above 200 it clips.
    public static let volumeRange = 0...200

    /// The eSpeak NG voice: a language such as `en-us` or `en`, optionally with a variant, `en+f3`.
    public let voice: String
    /// Words per minute.
    public let rate: Int
    public let pitch: Int
    public let volume: Int
    /// The format of `synthesize`'s output: eSpeak's sample rate, mono.
    public let outputFormat: PCMFormat

    /// The voice, rate (eSpeak NG's normal), pitch and volume used unless configured: the defaults of
    /// `hark say`, of the appliance's configuration and of this initializer alike.
    public static let defaultVoice = "en-us"
    public static let defaultRate = Int(espeakRATE_NORMAL)
    public static let defaultPitch = 50
    public static let defaultVolume = 100

    /// Checks every option against eSpeak NG: an unknown voice or variant, or a value out of range, throws.
    public init(voice: String = defaultVoice, rate: Int = defaultRate, pitch: Int = defaultPitch, volume: Int = defaultVolume)
        throws(SynthesisError) {
        for (option, value, allowed) in [("rate (words per minute)", rate, Self.rateRange),
                                         ("pitch", pitch, Self.pitchRange), ("volume", volume, Self.volumeRange)]
        where !allowed.contains(value) {
            throw .optionOutOfRange(option: option, value: value, allowed: allowed)
        }
        self.voice = voice
        self.rate = rate
        self.pitch = pitch
        self.volume = volume
        outputFormat = try ESpeakEngine.withEngine { (started) throws(SynthesisError) -> PCMFormat in
            let sampleRate = try Self.engineRate(started)
            try Self.validate(voice: voice)
            return PCMFormat(sampleRate: sampleRate, channels: 1)
        }
    }

    /// Every installed voice; pass one of its `languages` as `voice`.
    /// The corresponding C function is `espeak_ListVoices`.
    public static func availableVoices() throws(SynthesisError) -> [ESpeakVoice] {
        try ESpeakEngine.withEngine { (started) throws(SynthesisError) -> [ESpeakVoice] in
            _ = try engineRate(started)
            return ESpeakEngine.voices(variants: false)
        }
    }

    /// Voice variants (`f3`, `m2`, `klatt`, …), to append to a voice after `+`.
    public static func availableVariants() throws(SynthesisError) -> [ESpeakVoice] {
        try ESpeakEngine.withEngine { (started) throws(SynthesisError) -> [ESpeakVoice] in
            _ = try engineRate(started)
            return ESpeakEngine.voices(variants: true)
        }
    }

    /// The whole of `text` as one buffer in `outputFormat`.
    /// The corresponding C function is `espeak_ng_Synthesize`.
    public func synthesize(_ text: String) throws(SynthesisError) -> PCMBuffer {
        var samples: [Int16] = []
        try run(text) { chunk in
            samples.append(contentsOf: chunk)
            return true
        }
        return PCMBuffer(format: outputFormat, samples: samples)
    }

    /// Speaks `text` into `sink` while it is being synthesised: each chunk eSpeak produces (about
    /// `ESpeakEngine.chunkMilliseconds` of audio) is converted to the sink's format with a streaming
    /// resampler and written at once, so playback of a long reply starts before synthesis ends.
    /// Does not call `drain()`: a caller queuing several replies drains once. Throws `.sink` with the
    /// sink's error if a write fails (synthesis stops there).
    @discardableResult
    public func speak(_ text: String, to sink: AudioSink) throws(SynthesisError) -> SpeechDelivery {
        try speak(text, to: sink, tap: nil)
    }

    /// `speak`, also handing `tap` every chunk exactly as eSpeak produced it (before conversion), so tests
    /// can compare what reached the sink with the very audio it came from: two syntheses of one text differ.
    func speak(_ text: String, to sink: AudioSink, tap: ((PCMBuffer) -> Void)?) throws(SynthesisError) -> SpeechDelivery {
        let target = sink.format
        let mono = PCMFormat(sampleRate: outputFormat.sampleRate, channels: 1)
        let resampler: Resampler?
        do {
            resampler = target.sampleRate == mono.sampleRate
                ? nil : try Resampler(from: mono.sampleRate, to: target.sampleRate, channels: 1)
        } catch {
            throw .resampling(error)
        }
        let clock = ContinuousClock()
        let start = clock.now
        var delivery = SpeechDelivery(timeToFirstAudio: .zero, totalTime: .zero, chunkCount: 0, frameCount: 0, format: target)
        var failure: SynthesisError?

        func deliver(_ buffer: PCMBuffer, last: Bool) -> Bool {
            guard failure == nil else { return false }
            do {
                var converted = buffer
                if let resampler {
                    do { converted = try resampler.process(buffer, last: last) } catch { throw SynthesisError.resampling(error) }
                }
                guard !converted.isEmpty else { return true }
                converted = Self.spread(converted, to: target.channels)
                do { try sink.write(converted) } catch { throw SynthesisError.sink(error) }
                if delivery.chunkCount == 0 { delivery.timeToFirstAudio = start.duration(to: clock.now) }
                delivery.chunkCount += 1
                delivery.frameCount += converted.frameCount
                return true
            } catch let error as SynthesisError {
                failure = error
                return false
            } catch {
                failure = .sink(error)
                return false
            }
        }

        do {
            try run(text) { chunk in
                let buffer = PCMBuffer(format: mono, samples: Array(chunk))
                tap?(buffer)
                return deliver(buffer, last: false)
            }
        } catch {
            // A failed write stops eSpeak, which then reports ENS_SPEECH_STOPPED: the write's error is the cause.
            throw failure ?? error
        }
        // The resampler holds back its filter's delay: flush it so the reply's last syllable is heard.
        if resampler != nil {
            _ = deliver(PCMBuffer(format: mono), last: true)
            if let failure { throw failure }
        }
        delivery.totalTime = start.duration(to: clock.now)
        return delivery
    }

    /// Selects this synthesizer's voice and parameters (another user of the engine may have changed
    /// them) and synthesises `text`, handing chunks to `receive`.
    private func run(_ text: String, receive: @escaping (UnsafeBufferPointer<Int16>) -> Bool) throws(SynthesisError) {
        guard text.contains(where: { !$0.isWhitespace }) else { throw .emptyText }
        try ESpeakEngine.withEngine { (started) throws(SynthesisError) in
            _ = try Self.engineRate(started)
            do throws(ESpeakError) {
                try ESpeakEngine.select(voice: voice)
                try ESpeakEngine.set(espeakRATE, rate)
                try ESpeakEngine.set(espeakPITCH, pitch)
                try ESpeakEngine.set(espeakVOLUME, volume)
                try ESpeakEngine.synthesize(text, receive: receive)
            } catch {
                throw .engine(error)
            }
        }
    }

    private static func engineRate(_ started: Result<Int, ESpeakError>) throws(SynthesisError) -> Int {
        switch started {
        case let .success(rate): return rate
        case let .failure(error): throw .engine(error)
        }
    }

    /// eSpeak silently ignores an unknown variant (`en+nonsense` speaks as `en`), so variants are checked
    /// against the installed list; the voice itself is checked by selecting it. Call inside `withEngine`.
    private static func validate(voice: String) throws(SynthesisError) {
        let parts = voice.split(separator: "+", maxSplits: 1, omittingEmptySubsequences: false)
        func unknown() -> SynthesisError {
            .unknownVoice(voice, available: ESpeakEngine.voices(variants: false).compactMap(\.languages.first))
        }
        guard let language = parts.first, !language.isEmpty else { throw unknown() }
        do { try ESpeakEngine.select(voice: voice) } catch { throw unknown() }
        if parts.count == 2 {
            let variants = ESpeakEngine.voices(variants: true).map(\.variantName)
            guard variants.contains(String(parts[1])) else {
                throw .unknownVoice(voice, available: variants.map { "\(language)+\($0)" })
            }
        }
    }

    /// Mono audio copied into every channel of a multi-channel sink.
    private static func spread(_ mono: PCMBuffer, to channels: Int) -> PCMBuffer {
        guard channels > 1 else { return mono }
        var samples: [Int16] = []
        samples.reserveCapacity(mono.samples.count * channels)
        for sample in mono.samples { samples.append(contentsOf: repeatElement(sample, count: channels)) }
        return PCMBuffer(format: PCMFormat(sampleRate: mono.format.sampleRate, channels: channels), samples: samples)
    }
}
