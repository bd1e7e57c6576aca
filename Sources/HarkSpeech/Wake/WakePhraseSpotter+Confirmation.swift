import HarkAudio

extension WakePhraseSpotter {
    /// Audio after the keyphrase's detected end that the second pass also decodes: the search may end the
    /// phrase a frame or two before its last phone has died away.
    static let confirmationTail = 800
    /// A hit's length earns score up to this many seconds and no further: true phrases are rarely longer (the
    /// test voices' 45 hits over 0.7 s all had a word margin of -4 or better), and a keyphrase path stretched
    /// over other speech must not buy its way in with its length. Any limit from 0.6 to 0.9 s gave the same
    /// dev-half result (docs/wake-phrase.md).
    static let durationCreditSeconds = 0.7

    /// The second pass over a keyphrase hit: the hit's audio (with `preRollSeconds` before it) decoded by the
    /// phrase grammar and by the free phone loop, each with batch CMN over that audio.
    func confirm(start: Int, end: Int, keyphraseScore: Double) throws -> WakeCandidate {
        var candidate = WakeCandidate(
            start: start, end: end, keyphraseScore: keyphraseScore, margin: nil, weakestWordMargin: nil, score: nil,
            commandStart: end, accepted: true, rejection: "")
        if Self.seconds(end - start) > settings.maximumPhraseSeconds {
            candidate.accepted = false
            candidate.rejection = "longer than maximum_phrase_seconds"
            return candidate
        }
        guard settings.confirms else { return candidate }
        let from = max(history.firstIndex, start - Self.position(settings.preRollSeconds))
        let window = Array(history.slice(from: from, to: end + Self.confirmationTail))
        guard let aligned = try decode(window, search: Self.phraseSearch) else {
            candidate.accepted = false
            candidate.rejection = "the phrase grammar found no path"
            return candidate
        }
        let phones = try decode(window, search: Self.phoneSearch) ?? []
        // The recogniser's margins, over the window and per word (the confirmer keeps `-pip 1`, so no insertion bonus).
        candidate.margin = SpeechRecognizer.margin(
            of: aligned, reference: phones.reduce(0.0) { $0 + Double($1.acousticScore) }, frames: max(1, confirmer.frameCount),
            decoder: confirmer)
        let words = aligned.filter { SpeechRecognizer.spokenWord($0.word) != nil }
        candidate.weakestWordMargin = words.map { SpeechRecognizer.margin(ofWord: $0, against: phones, decoder: confirmer) }.min()
        if let last = words.last { candidate.commandStart = from + (last.endFrame + 1) * Self.samplesPerFrame }
        // The weakest word decides: a false hit often fits one word well ("park" for "hark") and the other
        // badly, which a margin over the whole window averages away (dev streams, kws 1e-30: 101 hits with 19
        // false wakes at a word margin of -3, against 100 with 25 at a window margin of -1.5). Its length
        // counts too: hits on other speech are mostly a quarter of a second, true ones about 0.6 s.
        let credited = min(Self.seconds(end - start), Self.durationCreditSeconds)
        candidate.score = candidate.weakestWordMargin.map { $0 + settings.confirmationDurationWeight * credited }
        if (candidate.score ?? -.infinity) < settings.confirmationThreshold {
            candidate.accepted = false
            candidate.rejection = "confirmation score below confirmation_threshold"
        }
        // The third look: the verifier hears the hit's spectrogram, when the second pass let it through. The
        // evaluation records every hit's (what the verifier is trained on).
        let judged = verifier != nil && candidate.accepted
        guard judged || recordsCandidates else { return candidate }
        let spectrogram = WakeFeatures.logMel(history.padded(from: end - WakeFeatures.leadSamples, to: end + WakeFeatures.tailSamples))
        if recordsCandidates { candidate.spectrogram = spectrogram }
        if let verifier, judged {
            let probability = verifier.probability(
                spectrogram: spectrogram, weakestWordMargin: candidate.weakestWordMargin, seconds: Self.seconds(end - start),
                keyphraseScore: keyphraseScore)
            candidate.verifierProbability = probability
            if probability < settings.verifierThreshold {
                candidate.accepted = false
                candidate.rejection = "verifier probability below verifier_threshold"
            }
        }
        return candidate
    }

    /// The best path of `search` through `window` as one whole utterance, or `nil` if a grammar reached no
    /// final state.
    private func decode(_ window: [Int16], search: String) throws -> [PocketSphinxDecoder.Segment]? {
        try confirmer.useSearch(search)
        try confirmer.startUtteranceAtFrameZero()
        try confirmer.process(window, fullUtterance: true)
        try confirmer.endUtterance()
        guard let hypothesis = confirmer.hypothesis(), !hypothesis.text.isEmpty else { return nil }
        return confirmer.segments()
    }
}
