/// How a `SpeechRecognizer` searches.
public struct RecognitionOptions: Sendable, Equatable {
    /// What the recogniser may hear.
    public enum Search: Sendable, Equatable {
        /// Only the workspace's sentences (the factored JSGF grammar). The default: accurate and fast.
        case grammar
        /// A trigram model of the workspace's sentences: near them, not only them.
        case languageModel
        /// Any English (the general en-us model), for `hark transcribe --general`.
        case general
    }

    /// How cepstral mean normalisation (CMN) sees an utterance.
    public enum CepstralMean: Sendable, Equatable {
        /// The mean of the whole utterance, computed when it ends: the model's own setting and what
        /// `pocketsphinx_batch` does. Decoding happens in `finishUtterance`.
        case batch
        /// A running mean, reset to the model's initial mean at every utterance start so that results do not
        /// depend on what was heard before. Decoding happens as audio arrives.
        case live
        /// Decoding as audio arrives, normalised with the mean of the utterance's first `meanSeconds`: nothing is
        /// decoded until that much has arrived; then the front end alone computes its mean (as batch CMN would for
        /// an utterance that long), the same stretch's SNR estimate chooses the noisy-speech decoder, the audio so
        /// far is decoded, and every later block as it comes. The phone loop runs alongside in decoders of its own,
        /// so finishing costs the last block, not a second pass. An utterance shorter than `meanSeconds` is
        /// decoded whole when it ends, with its own mean as `.batch` would (the phone loop's front end starts afresh,
        /// so its margins differ a little from `.batch`'s) (docs/speech.md, "Streaming with the first seconds' mean").
        case streaming(meanSeconds: Double)

        /// The default streaming setting (docs/speech.md, "Streaming with the first seconds' mean").
        public static let defaultStreaming = CepstralMean.streaming(meanSeconds: 1.0)

        /// Whether PocketSphinx's own CMN runs in live mode (`-cmn live`).
        var isLive: Bool { self != .batch }
        var isStreaming: Bool { if case .streaming = self { true } else { false } }
    }

    public var search: Search
    public var cepstralMean: CepstralMean
    /// Run the free phone loop to measure the acoustic confidence (about doubles the decoding time).
    public var measuresConfidence: Bool
    public var confidence: AcousticConfidence
    /// The phone loop's beam (`-beam`/`-pbeam` for that search only): it needs only a good path, not the best
    /// one, and a wide phone loop costs several times the grammar search.
    public var phoneLoopBeam: Double
    /// Context-independent phones in the phone loop (`-allphone_ci`): faster, a coarser reference.
    public var phoneLoopContextIndependent: Bool
    /// With the batch mean, run the phone loop on a decoder of its own on another thread while the grammar is
    /// decoded, rather than after it: the same transcript and margins, sooner, for about 10 MiB more per decoder
    /// setting (docs/speech.md, "The phone loop alongside").
    public var phoneLoopAlongside: Bool
    /// Extra PocketSphinx arguments, e.g. `["-beam": "1e-80"]`; they override the defaults.
    public var decoderArguments: [String: String]
    /// Different decoder settings for noisy utterances (`nil`: one setting for all). Applies to whole-utterance
    /// decoding (batch CMN), where the whole utterance is known before it is decoded.
    public var noisy: NoisyDecoding?
    /// The noisy-speech settings in effect: `noisy`, unless the decoding is live (a running mean decodes before the
    /// utterance, and so its noise, is known). What `SpeechRecognizer` builds its noisy-speech decoder from.
    public var effectiveNoisy: NoisyDecoding? { cepstralMean == .live ? nil : noisy }
    /// How speech in moderate noise is decoded (nil: as clean speech). Like `noisy`, not with a live mean.
    public var moderate: ModerateDecoding?
    public var effectiveModerate: ModerateDecoding? { cepstralMean == .live ? nil : moderate }
    /// How much of the room either side of the words the utterance's margin counts, in seconds (`nil`: every frame,
    /// the default). Room costs the grammar's silence as little as the phone loop's, so each second of it pulls the
    /// margin towards zero whatever was said; a fixed stretch around the words was meant to keep the margin the same
    /// however much room the endpointer or a file left. Measured, it separated commands from non-commands no better
    /// and needed every rejection point moved, so it is an experiment (docs/speech.md, "The noisy-speech rejection
    /// point, for endpointed utterances"); `Transcript.nearMargin` reports it either way.
    public var marginRoom: Double?
    /// A third judge for clean speech, against any English (`nil`, the default: none; `.standard` turns it on). It
    /// turns away a fifth to a third of the clean non-commands the margin accepts, for two to three times the
    /// decoding's processor time and a later answer to long commands, so it is an option (docs/speech.md, "Any English
    /// as the reference"). Applies to whole-utterance decoding (batch CMN) with the grammar search: the utterances the
    /// usual decoder (not the noisy-speech one) decodes are also decoded by the general model, on a third thread, and
    /// its verdict counts for those the acoustic point accepts.
    public var anyEnglish: AnyEnglish?
    /// A branch of the grammar search for speech that is none of the sentences (`OtherSpeech`; `.standard` by default,
    /// `nil`: none). An utterance that takes it comes back with no words (`Transcript.otherSpeech`). Grammar search
    /// only, and only the usual decoder's (clean speech), not the moderate-noise or noisy-speech decoder's.
    public var otherSpeech: OtherSpeech?
    /// A loop beside each dictionary entity's values in the usual decoder's grammar, for a thing the workspace does not
    /// know said in a value's place (`OtherValue`; `nil`: none). A command whose value's place takes it is not run
    /// (`Transcript.otherValue`).
    public var otherValue: OtherValue?
    /// How a second reading of each utterance, with the workspace's words in any order (`SecondReading`), is used.
    /// `.decide` by default (docs/speech.md "A second reading decides"): in clean speech a reading sure of its words and
    /// their intent is what runs, and a grammar's sentence the reading means otherwise (another intent, or the same one
    /// without some of its values) is not run; in moderate noise a sure reading only answers in place of a sentence the
    /// grammar accepted. `.check` only turns away what the two readings disagree on, in clean speech and in moderate
    /// noise. Whole-utterance decoding (batch CMN) with the grammar search, never the noisy-speech decoder's; only for a
    /// workspace of two intents or more (with one, the readings cannot mean different commands).
    public var secondReading: SecondReading.Use
    /// Whether the usual decoder's grammar (clean speech) also takes each example with courtesy words around it
    /// ("could you … please", `SpeechGrammar.Courtesy`; on by default, docs/speech.md "Courtesy words"): the grammar
    /// search, for a workspace of two intents or more (with one, the examples' own openings carry its requests, and
    /// the words only let more near-commands through). The noisy-speech and moderate-noise decoders never use them.
    public var courtesyWords: Bool
    /// The least margin the words that carry a command's values may have (`Transcript.fit(ofWordsIn:)`; -4.25 by
    /// default, `nil`: not judged). A request that opens the way a command opens ("I'd like a quiet room") is heard as
    /// the command whose values sound nearest ("i'd like a mocha with cream"): the opening and the room around it fit, so
    /// the utterance's margin passes, but the values' own frames fit badly, and `SpeechUnderstanding` turns such a
    /// command away. Only values that last `valuesMinimumSeconds` together are judged: over a single short word the
    /// margin says as much about the voice as about the words (eSpeak NG's "light" fits badly when it is right). Chosen
    /// on tuning sets (docs/speech.md, "Near-commands: the values must fit"): the highest point that kept every dev order
    /// through the endpointer's clean cut. Clean speech only: the usual decoder's utterances, whole-utterance decoding
    /// (batch CMN) with the grammar search.
    public var valuesMarginPoint: Double?
    /// How long the values' words must last together before `valuesMarginPoint` judges them (0.5 s by default).
    public var valuesMinimumSeconds: Double

    /// The margin against any English: the grammar path's acoustic score per frame minus that of PocketSphinx's
    /// general English language model decoding the same audio (`SpeechModel.generalLanguageModel`, with the full
    /// pronunciation dictionary). The phone loop fits any string of phones, so it fits every utterance far better
    /// than words do, commands included; a reference made of words fits a command about as well as the grammar does
    /// and a sentence about something else much better. The utterance's acoustic confidence is then the lower of the
    /// margin's and this judge's (docs/speech.md, "Any English as the reference").
    public struct AnyEnglish: Sendable, Equatable {
        /// How the margin against any English becomes a confidence: 0.5 at `midpoint`.
        public var confidence: AcousticConfidence
        /// Only utterances whose own margin (`Transcript.acousticMargin`) is below this are judged; `nil`: every
        /// accepted one. A command the grammar fits this well is not in doubt.
        public var judgedBelow: Double?
        /// The general decoding's PocketSphinx arguments, on top of the recogniser's.
        public var decoderArguments: [String: String]

        public init(confidence: AcousticConfidence, judgedBelow: Double?, decoderArguments: [String: String]) {
            self.confidence = confidence
            self.judgedBelow = judgedBelow
            self.decoderArguments = decoderArguments
        }

        /// Chosen on the tuning sets only (60 dev-half orders, 40 flite home commands, 80 tuning non-commands in
        /// four flite voices; whole files and the endpointer's cuts; docs/speech.md, "Any English as the
        /// reference"). Beams narrower than the grammar's keep the general decoding at about a fifth of its
        /// default cost (real-time factor 0.08–0.14 on the development machine) with the same separation; narrower
        /// still lost commands. At -0.5 it turned away 8 of the 9 non-commands the acoustic point accepted in whole
        /// files and no command. Accepted tuning non-commands had margins of -1.54 and lower, so those at -1.0 and
        /// above are not judged.
        public static let standard = AnyEnglish(
            confidence: AcousticConfidence(midpoint: -0.5, scale: 0.4), judgedBelow: -1.0,
            decoderArguments: ["-beam": "1e-40", "-wbeam": "1e-25", "-pbeam": "1e-35", "-fwdflat": "no"])
    }

    /// How noisy speech is decoded: utterances whose `SignalToNoise` estimate is below `threshold` dB are
    /// decoded by a second decoder with `decoderArguments` on top of the usual ones.
    public struct NoisyDecoding: Sendable, Equatable {
        public var threshold: Double
        public var decoderArguments: [String: String]
        /// The acoustic confidence of utterances this decoder decodes with a model's noisy-speech means
        /// (`SpeechModel.noisyMeans`); nil, or a model without them, uses the recogniser's `confidence`. Means
        /// adapted to noise fit any speech in noise better, non-commands included, so they need their own
        /// rejection point (docs/model-adaptation.md).
        public var confidenceWithNoisyMeans: AcousticConfidence?
        /// With the noisy-speech means, a second judge: the confidence of the margin over the words alone
        /// (`Transcript.speechMargin`). The utterance's confidence is then the lower of the two, so it is accepted
        /// only when both margins pass their points. nil: the utterance margin alone.
        public var wordsConfidenceWithNoisyMeans: AcousticConfidence?

        public init(
            threshold: Double, decoderArguments: [String: String], confidenceWithNoisyMeans: AcousticConfidence? = nil,
            wordsConfidenceWithNoisyMeans: AcousticConfidence? = nil
        ) {
            self.threshold = threshold
            self.decoderArguments = decoderArguments
            self.confidenceWithNoisyMeans = confidenceWithNoisyMeans
            self.wordsConfidenceWithNoisyMeans = wordsConfidenceWithNoisyMeans
        }

        /// Measured on the speech-to-intent benchmark's dev half only (docs/speech.md, "Noisy speech"):
        /// evaluating 32 rather than 4 of each codebook's 128 Gaussians per frame (`-topn`) and a phone
        /// insertion bonus (`-pip 2`) together raised 6 dB kitchen-noise acceptance from 0.768 to 0.813 with
        /// the kitchen-adapted model, but cost clean speech (0.977 → 0.961), hence the threshold: the estimate
        /// reads below 20 dB for most audio mixed at 6–9 dB and above it for nearly all at 15 dB or cleaner.
        ///
        /// With the shipped noisy-speech means the rejection point moves from -3.0 to -2.0: on held-out dev clips
        /// at 6 dB kitchen noise it keeps 129 of the 130 orders -3.0 accepts and lets 33 of 80 non-commands of
        /// the tuning set through instead of 78 (`bench/data/ood-tuning-sentences.txt` in flite slt; at 12 dB,
        /// 150 of 150 kept; docs/model-adaptation.md, "Rejection with the noisy means").
        ///
        /// Then from -2.0 to -2.25 (2026-12-05), for what the appliance hears: the endpointer's cuts carry 0.3 s of room
        /// either side, whole files more, and room pulls the margin towards zero, so -2.0, chosen on whole files,
        /// turned away 35 of the 115 dev orders (`4…`–`7…`, kitchen noise at 6 dB) that -3.0 kept through the
        /// endpointer. -2.25 keeps 100 of them (127 of 131 at 12 dB, against 119) and lets 4 more of 960 tuning
        /// non-commands through (whole files and endpointed cuts, pink noise and babble, 6 and 12 dB, both
        /// workspaces); -2.5 would keep 10 more orders for 15 more non-commands (docs/speech.md, "The noisy-speech
        /// rejection point, for endpointed utterances").
        ///
        /// The words' margin's point, -4.25, is the highest that keeps the dev half's orders in kitchen noise
        /// within a point of the acceptance they had (310 whole files at 6 and at 12 dB; -3.5, the highest that
        /// cost no command of the pink-noise and babble tuning sets, lost 3.5 points at 6 dB); it turns away
        /// non-commands whose words fit badly though the room around them pulls the utterance's margin up
        /// (docs/speech.md, "The margin over the words").
        ///
        /// Then `-topn` 32 → 16 (2026-12-05), for the processor time: with the noisy-speech means the same dev orders
        /// are right (held-out means, kitchen noise: 128 and 143 of 159 at 6 and 9 dB either way; the endpointer's cuts
        /// 100 and 125 of 159 at 6 and 12 dB, against 100 and 127), the tuning non-commands accepted are the same
        /// or fewer (108 against 110 of 640), and the noisy decoding takes a quarter less processor time at 6 dB
        /// (docs/speech.md, "Noisy speech"). The rejection points above keep their meaning: the phone loop uses the
        /// same setting.
        ///
        /// Then -2.25 → -2.4 (2026-12-06), because the endpointer's cuts changed: with its voicing rule an utterance
        /// in a kitchen's clatter ends about a second sooner and carries that much less room, which pulls the margin
        /// of the same words down (the dev orders at 6 dB through the cuts, same transcripts: 100 → 90 of 159 kept
        /// at -2.25). -2.4 is the highest point that keeps them within a point of before (99 of 159 at 6 dB, 124 at
        /// 12 dB, against 100 and 125); it lets 2 more of the 640 tuning non-commands through the cuts (docs/speech.md,
        /// "Voiced speech keeps an utterance going").
        public static let standard = NoisyDecoding(
            threshold: 20, decoderArguments: ["-topn": "16", "-pip": "2"],
            confidenceWithNoisyMeans: AcousticConfidence(midpoint: -2.4, scale: 0.4),
            wordsConfidenceWithNoisyMeans: AcousticConfidence(midpoint: -4.25, scale: 0.4))
    }

    /// How speech in moderate noise is decoded: an utterance whose `SignalToNoise` estimate is below `below` dB, and
    /// not below the noisy-speech threshold (`NoisyDecoding.threshold`, when that decoder is on), is decoded by a
    /// decoder with the usual settings and the model's moderate-noise means (`SpeechModel.moderateMeans`); without
    /// such means there is no such decoder. Means adapted to noise fit any speech in noise better, non-commands
    /// included, so its utterances have their own rejection point, `confidence`.
    ///
    /// Why (docs/speech.md, "Moderate noise: a third decoder"): between the kitchen at 6–9 dB, which the noisy-speech
    /// decoder takes, and clean speech, the benchmark's orders mixed at 12–24 dB were decoded with the stock means and
    /// lost 2–4 points against clean speech. Means adapted at 15, 18 and 21 dB, given to the usual decoder, got 15 more
    /// orders right than the stock means over the 7 SNRs on the dev half (two folds, each adapted on the other half's
    /// speakers; 310 orders an SNR) and none fewer net at any SNR. Clean speech reads 46 dB and more (5th percentile of
    /// the dev clips), speech mixed at 24 dB a median 33 dB; `below` is 40 dB, so clean speech decodes as before.
    /// Audio without a noise floor of its own (synthetic speech) stays with the usual decoder whatever its estimate.
    ///
    /// The rejection point, -2.7 (the usual decoder's is -3.0), was chosen on tuning data only, by the rule the other
    /// points follow: turn away as many non-commands as possible while losing at most a point of commands. Through the
    /// endpointer's cuts at 12 dB, dev orders `4…`–`7…` in the kitchen noise (held-out means): 124 of 159 right, as
    /// with the stock means (-3.0 would keep 128, -2.6 only 120); home.json examples in flite kal and eSpeak NG in the
    /// tuning noise: 83 of 160 at 12 dB and 112 at 18 dB, against 83 and 108; the tuning non-commands (flite slt and
    /// rms) accepted at 12 dB: barista 4 and home 12 of 160, against 5 and 15. Whole files carry more room and sit
    /// above every point from -3.0 to -2.5, so there the gain is whole.
    public struct ModerateDecoding: Sendable, Equatable {
        public var below: Double
        public var confidence: AcousticConfidence

        public init(below: Double, confidence: AcousticConfidence) {
            self.below = below
            self.confidence = confidence
        }

        public static let standard = ModerateDecoding(below: 40, confidence: AcousticConfidence(midpoint: -2.7, scale: 0.4))
    }

    /// Beams wide enough that noisy speech still reaches the end of the grammar (docs/measurements.md, "Wide
    /// beams": the defaults lose hypotheses at 6 dB), with the cost still well under real time for a command grammar.
    /// Narrower beams would cut the grammar pass's cost without losing words, but they move the acoustic margin and
    /// weaken its rejection (docs/speech.md, "Why the beams stay wide although they cost the most").
    /// `valuesMarginPoint`'s default: the highest point that kept every dev order through the endpointer's clean cut
    /// (docs/speech.md, "Near-commands: the values must fit").
    public static let standardValuesMarginPoint = -4.25
    /// `valuesMinimumSeconds`' default: the shortest at which every in-domain tuning set whose loss depends on it kept
    /// 99% of its right commands (eSpeak NG's home commands, whose values are one short word, were the last).
    public static let defaultValuesMinimumSeconds = 0.5

    public static let defaultDecoderArguments: [String: String] = [
        "-beam": "1e-80", "-pbeam": "1e-80", "-wbeam": "1e-50",
    ]

    public init(
        search: Search = .grammar, cepstralMean: CepstralMean = .batch, measuresConfidence: Bool = true,
        confidence: AcousticConfidence = .standard, phoneLoopBeam: Double = 1e-20, phoneLoopContextIndependent: Bool = true,
        decoderArguments: [String: String] = [:], noisy: NoisyDecoding? = .standard, moderate: ModerateDecoding? = .standard,
        phoneLoopAlongside: Bool = true, marginRoom: Double? = nil, anyEnglish: AnyEnglish? = nil,
        otherSpeech: OtherSpeech? = .standard, otherValue: OtherValue? = nil, secondReading: SecondReading.Use = .decide, courtesyWords: Bool = true,
        valuesMarginPoint: Double? = RecognitionOptions.standardValuesMarginPoint,
        valuesMinimumSeconds: Double = RecognitionOptions.defaultValuesMinimumSeconds
    ) {
        self.valuesMarginPoint = valuesMarginPoint
        self.valuesMinimumSeconds = valuesMinimumSeconds
        self.otherSpeech = otherSpeech
        self.otherValue = otherValue
        self.secondReading = secondReading
        self.courtesyWords = courtesyWords
        self.moderate = moderate
        self.anyEnglish = anyEnglish
        self.marginRoom = marginRoom
        self.phoneLoopAlongside = phoneLoopAlongside
        self.noisy = noisy
        self.phoneLoopBeam = phoneLoopBeam
        self.phoneLoopContextIndependent = phoneLoopContextIndependent
        self.search = search
        self.cepstralMean = cepstralMean
        self.measuresConfidence = measuresConfidence
        self.confidence = confidence
        self.decoderArguments = decoderArguments
    }
}
