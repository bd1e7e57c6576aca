import CPocketSphinx

extension PocketSphinxDecoder {
    /// One keyphrase detection of a keyphrase search: the phrase, its first and last frame (100 per second,
    /// counted from the utterance start) and the log-likelihood ratio that crossed the threshold.
    struct KeyphraseDetection: Sendable, Equatable {
        var phrase: String
        var startFrame: Int
        var endFrame: Int
        /// The keyphrase path's score minus the best free phone-loop path's at `endFrame`, in the decoder's
        /// log base, shifted as the search keeps it (compare with `kwsThreshold` through `keyphraseLog10`).
        var ratio: Int32
    }

    /// Adds a keyphrase search called `name` spotting `phrase`. The search reads its threshold, delay and
    /// beam from the decoder's configuration when it is created, so they are set there for that moment only:
    /// the grammar and phone-loop searches of the same decoder keep their own. Every word of `phrase` must
    /// be in the dictionary: 5prealpha accepts an unknown word silently and then never fires (docs/measurements.md).
    /// The corresponding C functions are `ps_set_keyphrase` and `cmd_ln_set_float_r`.
    func addKeyphrase(name: String, phrase: String, threshold: Double, delayFrames: Int, beam: Double) throws(PocketSphinxError) {
        for word in phrase.split(separator: " ") where pronunciation(of: String(word)) == nil {
            throw PocketSphinxError(function: "ps_lookup_word", code: -1, message: "the keyphrase word '\(word)' is not in the dictionary")
        }
        let config = ps_get_config(decoder)
        let saved = (cmd_ln_float_r(config, "-kws_threshold"), cmd_ln_int_r(config, "-kws_delay"), cmd_ln_float_r(config, "-beam"))
        cmd_ln_set_float_r(config, "-kws_threshold", threshold)
        cmd_ln_set_int_r(config, "-kws_delay", delayFrames)
        cmd_ln_set_float_r(config, "-beam", beam)
        defer {
            cmd_ln_set_float_r(config, "-kws_threshold", saved.0)
            cmd_ln_set_int_r(config, "-kws_delay", saved.1)
            cmd_ln_set_float_r(config, "-beam", saved.2)
        }
        try PocketSphinxError.check(ps_set_keyphrase(decoder, name, phrase), "ps_set_keyphrase", "the keyphrase '\(phrase)' was not accepted")
    }

    /// The detections of the current keyphrase search that are settled (ended more than the search's delay
    /// ago), newest first. The corresponding C functions are `ps_seg_iter`, `ps_seg_frames` and `ps_seg_prob`
    /// (which returns the detection's ratio in a keyphrase search).
    func keyphraseDetections() -> [KeyphraseDetection] {
        segments().map { KeyphraseDetection(phrase: $0.word, startFrame: $0.startFrame, endFrame: $0.endFrame, ratio: $0.probability) }
    }

    /// A keyphrase detection's ratio as a base-10 logarithm, the scale `-kws_threshold` is written in
    /// (1e-20 → -20). 5prealpha stores a detection's ratio less KWS_MAX (1500) and keeps scores shifted right
    /// by SENSCR_SHIFT (10 bits). The corresponding C function is `logmath_log_to_ln`.
    func keyphraseLog10(_ ratio: Int32) -> Double {
        naturalLog(1) * 1024 * Double(Int(ratio) + 1500) / 2.302_585_092_994_046
    }

    /// Starts an utterance whose frames count from 0: segment frames are stream-wide in 5prealpha (every
    /// frame any search decoded since the stream began, confirmation passes included), so each utterance
    /// is made a stream of its own. It also restarts the front end's noise estimate.
    /// The corresponding C functions are `ps_start_stream` and `ps_start_utt`.
    func startUtteranceAtFrameZero() throws(PocketSphinxError) {
        try PocketSphinxError.check(ps_start_stream(decoder), "ps_start_stream", "could not start a stream")
        try startUtterance()
    }
}
