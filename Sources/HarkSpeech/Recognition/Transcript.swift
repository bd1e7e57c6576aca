/// What the recogniser heard in one utterance.
public struct Transcript: Sendable, Equatable {
    /// A recognised word and when it was said (seconds from the utterance start).
    public struct Word: Sendable, Equatable {
        public var text: String
        public var start: Double
        public var end: Double
        /// The word's own acoustic margin: its grammar-path score minus the free phone loop's over the same frames,
        /// per frame (natural log, as `Transcript.acousticMargin`); `nil` when the confidence pass did not run.
        /// The whole utterance's margin averages over every frame; a sentence forced onto the grammar often fits
        /// most words and misses one, which shows here.
        public var margin: Double?

        public init(text: String, start: Double, end: Double, margin: Double? = nil) {
            self.text = text
            self.start = start
            self.end = end
            self.margin = margin
        }
    }

    /// The words joined by spaces; empty when nothing in the grammar was heard.
    public var text: String
    public var words: [Word]
    /// How well the audio fits the recognised words compared with the best free phone sequence, 0…1
    /// (see `AcousticConfidence`), or with any English when that judge ran and says less (`englishMargin`,
    /// `marginConfidence`). 0 when there is no hypothesis; 1 when the confidence pass is off.
    public var acousticConfidence: Double
    /// The raw per-frame log-likelihood margin behind `acousticConfidence` (natural log, ≤ 0 in practice;
    /// `nil` when not measured), kept for calibration and `--explain` output.
    public var acousticMargin: Double?
    /// The lowest of the words' margins (`Word.margin`); `nil` without words or without the confidence pass.
    public var weakestWordMargin: Double? { words.compactMap(\.margin).min() }
    /// The margin over the spoken words alone: the words' margins (`Word.margin`) averaged over their frames,
    /// leaving out the silence and filler segments around and between them; `nil` without the confidence pass or
    /// words. Room around the words, which pulls `acousticMargin` (an average over every frame) towards 0, does not
    /// enter it; the noisy-speech decoder uses it as a second judge (docs/speech.md, "The margin over the words").
    public var speechMargin: Double?
    /// The utterance's margin over the words and `RecognitionOptions.marginRoom` (0.3 s if unset) of input either side
    /// of them; `nil` when that leaves no frame out (it is then `acousticMargin`) or without the confidence pass.
    public var nearMargin: Double?
    /// The utterance's margin against any English (`RecognitionOptions.anyEnglish`): the grammar path's acoustic score
    /// per frame minus the general English model's on the same audio; `nil` when that judge did not run (noisy speech,
    /// a margin the acoustic point rejects or above the judge's `judgedBelow`, or the judge off).
    public var englishMargin: Double?
    /// Whether the search's best path went through the grammar's branch for other speech
    /// (`RecognitionOptions.otherSpeech`): the audio is speech that none of the workspace's sentences fits, and
    /// `text` is empty.
    public var otherSpeech = false
    /// How long the search's best path spent in a value's loop (`RecognitionOptions.otherValue`), seconds; 0 when it
    /// did not take one.
    public var otherValueSeconds = 0.0
    /// Whether the best path took a value's loop: the words around a value are a command's, but what was said in the
    /// value's place is none of the entity's values. `text` leaves it out.
    public var otherValue: Bool { otherValueSeconds > 0 }
    /// The second reading's words (`RecognitionOptions.secondReading`): the same audio decoded with the workspace's
    /// words in any order; `nil` when it did not run (noisy speech, below 20 dB; streaming, a workspace of one intent,
    /// or off).
    public var secondReading: String?
    /// The grammar path's acoustic score per frame minus the second reading's on the same audio (negative: the free
    /// reading's words fit the sound better); nil when either found no path.
    public var secondReadingMargin: Double?
    /// The second reading's own acoustic confidence (its margin against the phone loop, through the calibration of the
    /// decoder that read it) when it may answer (`SecondReading.Use.decide`, both paths found); nil otherwise.
    public var secondReadingConfidence: Double?
    /// How much the second reading's words read like the workspace's sentences: their mean log10 probability per word
    /// under its trigram model (`ARPALanguageModel.log10ProbabilityPerWord`); nil without words.
    public var secondReadingFluency: Double?
    /// When the judge against any English ran: the acoustic confidence from the margins alone, before that judge had
    /// its say (`acousticConfidence` is the lower of the two). `SpeechUnderstanding` uses it for intents that take
    /// free words (`Workspace.freeTextIntents`).
    public var marginConfidence: Double?
    /// The margin against any English when that judge alone brought the confidence below `threshold` (the margins
    /// passed it); nil otherwise. What a rejection reason names.
    public func turnedAwayAgainstEnglish(threshold: Double) -> Double? {
        guard let englishMargin, acousticConfidence < threshold, (marginConfidence ?? 0) >= threshold else { return nil }
        return englishMargin
    }
    /// The least margin the words of the command's values may have (`RecognitionOptions.valuesMarginPoint`) when the
    /// decoder that heard this utterance is judged that way (the usual decoder, whole utterances); nil otherwise.
    public var valuesMarginPoint: Double?
    /// How long the values' words must last together for their margin to be judged
    /// (`RecognitionOptions.valuesMinimumSeconds`).
    public var valuesMinimumSeconds = RecognitionOptions.defaultValuesMinimumSeconds
    /// The indices of the words lying wholly inside one of `spans` (offsets `[start, end)` into `text`, counted in Unicode
    /// scalars, as `EntityMatch` gives them); nil when the words do not spell `text`.
    public func words(inside spans: [Range<Int>]) -> [Int]? {
        guard words.map(\.text).joined(separator: " ") == text else { return nil }
        var offset = 0
        var inside: [Int] = []
        for (i, word) in words.enumerated() {
            let range = offset..<(offset + word.text.unicodeScalars.count)
            offset = range.upperBound + 1
            if spans.contains(where: { $0.lowerBound <= range.lowerBound && range.upperBound <= $0.upperBound }) { inside.append(i) }
        }
        return inside
    }
    /// How well the words inside `spans` (`words(inside:)`) fit: their margins (`Word.margin`) averaged over their
    /// durations, and how long they last together. Nil when no word lies wholly inside a span, a word there has no
    /// margin, or the words do not spell `text`.
    public func fit(ofWordsIn spans: [Range<Int>]) -> (margin: Double, seconds: Double)? {
        guard !spans.isEmpty, let inside = words(inside: spans) else { return nil }
        var score = 0.0
        var seconds = 0.0
        for word in inside.map({ words[$0] }) {
            guard let margin = word.margin else { return nil }
            let duration = max(0, word.end - word.start)
            score += margin * duration
            seconds += duration
        }
        return seconds > 0 ? (score / seconds, seconds) : nil
    }
    /// `SignalToNoise`'s estimate for the utterance in dB (`nil` when not measured: live decoding, or audio
    /// under 0.25 s).
    public var signalToNoise: Double?
    /// Whether the utterance was decoded with the noisy-speech settings (`RecognitionOptions.noisy`).
    public var noisyDecoding: Bool
    /// Whether it was decoded with the moderate-noise means (`RecognitionOptions.moderate`).
    public var moderateDecoding: Bool
    public var audioSeconds: Double
    /// Time spent decoding (both passes), milliseconds of wall-clock time.
    public var decodeMilliseconds: Double
    /// Processor time the decoding took (both passes, the decoding thread's own CPU time), milliseconds:
    /// divided by `audioSeconds` (×1000) it is the real-time factor.
    public var decodeCPUMilliseconds: Double
    /// For an endpointed utterance (`UtteranceListener`): how long after the endpointer declared the end the
    /// transcript was ready, milliseconds. Small when the decoding ran during the trailing silence; nil when
    /// the utterance was not endpointed (a whole file, push-to-talk).
    public var resultDelayMilliseconds: Double?
    /// For an endpointed utterance: seconds of audio the listener took in before the utterance ended (its padded
    /// start to the end decision). The decoded audio (`audioSeconds`) stops 0.3 s after the last speech instead.
    public var utteranceSeconds: Double?
    /// The input the word times refer to, 16 kHz mono (without the quiet the recogniser pads it with): an
    /// announcement said by voice plays these samples after its trigger words. Empty when not kept.
    public var recording: [Int16] = []

    public init(
        text: String, words: [Word], acousticConfidence: Double, acousticMargin: Double?, signalToNoise: Double? = nil,
        noisyDecoding: Bool = false, moderateDecoding: Bool = false, audioSeconds: Double, decodeMilliseconds: Double, decodeCPUMilliseconds: Double = 0,
        resultDelayMilliseconds: Double? = nil
    ) {
        self.decodeCPUMilliseconds = decodeCPUMilliseconds
        self.resultDelayMilliseconds = resultDelayMilliseconds
        self.signalToNoise = signalToNoise
        self.noisyDecoding = noisyDecoding
        self.moderateDecoding = moderateDecoding
        self.text = text
        self.words = words
        self.acousticConfidence = acousticConfidence
        self.acousticMargin = acousticMargin
        self.audioSeconds = audioSeconds
        self.decodeMilliseconds = decodeMilliseconds
    }
}
