import CHarkShim
import CPocketSphinx
import Foundation

/// One PocketSphinx decoder (`ps_decoder_t`), its searches, and one utterance at a time.
///
/// Not Sendable: the C decoder has no locking, so it stays with whoever made it (one recogniser, one thread
/// or actor at a time).
public final class PocketSphinxDecoder {
    /// A word (or phone, in a phone-loop search) of the best path with its frames (100 per second) and scores
    /// in the decoder's log base.
    public struct Segment: Sendable, Equatable {
        public var word: String
        public var startFrame: Int
        public var endFrame: Int
        /// Acoustic score of the segment (log base 1.0001, scaled as the search scales it).
        public var acousticScore: Int32
        public var languageScore: Int32
        /// What `ps_seg_prob` returns: the posterior in a grammar search, the detection's ratio in a keyphrase search.
        public var probability: Int32
    }

    let decoder: OpaquePointer

    /// A decoder configured by command-line style `arguments` (`["-hmm", path, "-dict", path, …]`); logging is
    /// silenced first, since sphinxbase otherwise writes to the process's stderr.
    /// The corresponding C functions are `cmd_ln_parse_r` and `ps_init`.
    public init(arguments: [String]) throws(PocketSphinxError) {
        chark_sphinx_silence()
        // argv[0] is the program name, as cmd_ln_parse_r expects.
        var argv: [UnsafeMutablePointer<CChar>?] = (["hark"] + arguments + ["-logfn", "/dev/null"]).map { strdup($0) }
        defer { for p in argv { free(p) } }
        let config = argv.withUnsafeMutableBufferPointer { buffer in
            cmd_ln_parse_r(nil, ps_args(), Int32(buffer.count), buffer.baseAddress, 1)
        }
        guard let config else {
            throw PocketSphinxError(function: "cmd_ln_parse_r", code: -1, message: "rejected the arguments \(arguments.joined(separator: " "))")
        }
        defer { cmd_ln_free_r(config) }
        guard let decoder = ps_init(config) else {
            throw PocketSphinxError(function: "ps_init", code: -1, message: "could not load the model (arguments: \(arguments.joined(separator: " ")))")
        }
        self.decoder = decoder
    }

    deinit { ps_free(decoder) }

    /// Adds a JSGF grammar search called `name`. The corresponding C function is `ps_set_jsgf_string`.
    public func addGrammar(name: String, jsgf: String) throws(PocketSphinxError) {
        try PocketSphinxError.check(ps_set_jsgf_string(decoder, name, jsgf), "ps_set_jsgf_string", "the grammar '\(name)' was not accepted")
    }

    /// Adds a grammar search called `name` from a finite-state grammar file (PocketSphinx's FSG text format),
    /// weighted by the decoder's language weight as a JSGF grammar would be. The corresponding C functions are
    /// `fsg_model_readfile` and `ps_set_fsg`.
    public func addFiniteStateGrammar(name: String, file: URL) throws(PocketSphinxError) {
        guard let fsg = fsg_model_readfile(file.path, ps_get_logmath(decoder), Float(floatSetting("-lw"))) else {
            throw PocketSphinxError(function: "fsg_model_readfile", code: -1, message: "could not read the finite-state grammar \(file.path)")
        }
        defer { fsg_model_free(fsg) }  // the search keeps its own reference
        try PocketSphinxError.check(ps_set_fsg(decoder, name, fsg), "ps_set_fsg", "the grammar '\(name)' was not accepted")
    }

    /// Adds an n-gram search called `name` from an ARPA or binary LM file. The corresponding C function is
    /// `ps_set_lm_file`.
    public func addLanguageModel(name: String, file: URL) throws(PocketSphinxError) {
        try PocketSphinxError.check(ps_set_lm_file(decoder, name, file.path), "ps_set_lm_file", "could not load the language model \(file.path)")
    }

    /// Adds a phone-loop search called `name` weighted by a phone LM. A search reads its beams when it is
    /// created, so `beam` (for `-beam` and `-pbeam`) and `contextIndependent` (`-allphone_ci`) are set on the
    /// decoder's configuration only while it is created: the phone loop may then be narrower and cheaper than
    /// the main search. The corresponding C functions are `ps_set_allphone_file` and `cmd_ln_set_float_r`.
    public func addPhoneLoop(name: String, phoneModel: URL, beam: Double? = nil, contextIndependent: Bool? = nil) throws(PocketSphinxError) {
        let config = ps_get_config(decoder)
        let saved = (cmd_ln_float_r(config, "-beam"), cmd_ln_float_r(config, "-pbeam"), cmd_ln_int_r(config, "-allphone_ci"))
        if let beam {
            cmd_ln_set_float_r(config, "-beam", beam)
            cmd_ln_set_float_r(config, "-pbeam", beam)
        }
        if let contextIndependent { cmd_ln_set_int_r(config, "-allphone_ci", contextIndependent ? 1 : 0) }
        defer {
            cmd_ln_set_float_r(config, "-beam", saved.0)
            cmd_ln_set_float_r(config, "-pbeam", saved.1)
            cmd_ln_set_int_r(config, "-allphone_ci", saved.2)
        }
        try PocketSphinxError.check(ps_set_allphone_file(decoder, name, phoneModel.path), "ps_set_allphone_file", "could not load the phone language model \(phoneModel.path)")
    }

    /// Makes `name` the search the next utterance uses. The corresponding C function is `ps_set_search`.
    public func useSearch(_ name: String) throws(PocketSphinxError) {
        try PocketSphinxError.check(ps_set_search(decoder, name), "ps_set_search", "no search named '\(name)'")
    }

    /// The corresponding C function is `ps_start_utt`.
    public func startUtterance() throws(PocketSphinxError) {
        try PocketSphinxError.check(ps_start_utt(decoder), "ps_start_utt", "could not start an utterance")
    }

    /// Feeds 16 kHz mono samples; `fullUtterance` says these are all of it (needed for batch CMN).
    /// The corresponding C function is `ps_process_raw`.
    public func process(_ samples: [Int16], fullUtterance: Bool = false) throws(PocketSphinxError) {
        guard !samples.isEmpty else { return }
        let code = samples.withUnsafeBufferPointer { ps_process_raw(decoder, $0.baseAddress, $0.count, 0, fullUtterance ? 1 : 0) }
        try PocketSphinxError.check(code, "ps_process_raw", "could not process \(samples.count) samples")
    }

    /// The corresponding C function is `ps_end_utt`.
    public func endUtterance() throws(PocketSphinxError) {
        try PocketSphinxError.check(ps_end_utt(decoder), "ps_end_utt", "could not end the utterance")
    }

    /// Decodes `audio` as one whole utterance (`fullUtterance`, for batch CMN) from frame zero; with `background`, the
    /// front end first runs over that audio (the room before the utterance, not decoded) and the utterance continues
    /// its stream (`SpeechRecognizer.decodeWhole`).
    public func decodeUtterance(_ audio: [Int16], background: [Int16] = []) throws {
        if background.isEmpty {
            try startUtteranceAtFrameZero()
        } else {
            _ = frontEndMean(of: background)
            try startUtterance()
        }
        try process(audio, fullUtterance: true)
        try endUtterance()
    }

    /// The best hypothesis so far and its path score, or `nil` (a grammar search that reached no final state).
    /// The corresponding C function is `ps_get_hyp`.
    public func hypothesis() -> (text: String, score: Int32)? {
        var score: Int32 = 0
        guard let text = ps_get_hyp(decoder, &score) else { return nil }
        return (String(cString: text), score)
    }

    /// The segments of the best path. The corresponding C functions are `ps_seg_iter` and `ps_seg_next`.
    public func segments() -> [Segment] {
        var result: [Segment] = []
        var iterator = ps_seg_iter(decoder)
        while let segment = iterator {
            var start: Int32 = 0
            var end: Int32 = 0
            var acoustic: Int32 = 0
            var language: Int32 = 0
            var backoff: Int32 = 0
            ps_seg_frames(segment, &start, &end)
            let probability = ps_seg_prob(segment, &acoustic, &language, &backoff)
            let word = ps_seg_word(segment).map { String(cString: $0) } ?? ""
            result.append(Segment(
                word: word, startFrame: Int(start), endFrame: Int(end), acousticScore: acoustic, languageScore: language,
                probability: probability))
            iterator = ps_seg_next(segment)  // frees the iterator at the end
        }
        return result
    }

    /// The best path's segments as an n-gram search reports them, with their acoustic scores in the grammar and
    /// phone-loop searches' units: an n-gram search takes its best path from the word lattice, whose acoustic scores
    /// PocketSphinx keeps unshifted (`<< SENSCR_SHIFT`, ten bits: 1,024 times the other searches').
    public func latticeSegments() -> [Segment] {
        segments().map { segment in var shifted = segment; shifted.acousticScore >>= 10; return shifted }
    }

    /// Frames (10 ms each) processed in this utterance. The corresponding C function is `ps_get_n_frames`.
    public var frameCount: Int { Int(ps_get_n_frames(decoder)) }

    /// A score in the decoder's log base as a natural logarithm. The corresponding C function is
    /// `logmath_log_to_ln`.
    public func naturalLog(_ score: Int32) -> Double { logmath_log_to_ln(ps_get_logmath(decoder), score) }

    /// A floating-point setting of the decoder's configuration (`-pip`, `-lw`, …). The corresponding C
    /// function is `cmd_ln_float_r`.
    public func floatSetting(_ name: String) -> Double { cmd_ln_float_r(ps_get_config(decoder), name) }

    /// The dictionary's phones for `word`, or `nil`. The corresponding C function is `ps_lookup_word`.
    public func pronunciation(of word: String) -> String? {
        guard let phones = ps_lookup_word(decoder, word) else { return nil }
        defer { free(phones) }
        return String(cString: phones)
    }

    /// The mean of the cepstra this decoder's front end makes of `samples`, as a new stream: what batch CMN
    /// would subtract were they the whole utterance. Runs the front end only (no search), so it costs a small
    /// fraction of decoding; the next `startUtteranceAtFrameZero` starts the front end afresh. Empty when the
    /// samples are too short for a frame. The corresponding C functions are `fe_process_frames` and `fe_end_utt`.
    /// With `newStream` false the front end's noise estimate goes on from where it was (the stream is not restarted).
    public func frontEndMean(of samples: [Int16], newStream: Bool = true) -> [Float] {
        guard let fe = ps_get_fe(decoder), !samples.isEmpty else { return [] }
        let dimension = Int(fe_get_output_size(fe))
        guard dimension > 0 else { return [] }
        if newStream { fe_start_stream(fe) }
        _ = fe_start_utt(fe)
        let capacity = 128
        let block = UnsafeMutablePointer<mfcc_t>.allocate(capacity: capacity * dimension)
        defer { block.deallocate() }
        var rows: [UnsafeMutablePointer<mfcc_t>?] = (0..<capacity).map { block + $0 * dimension }
        var sum = [Double](repeating: 0, count: dimension)
        var frames = 0
        func add(_ count: Int) {
            for frame in 0..<count {
                for k in 0..<dimension { sum[k] += Double(block[frame * dimension + k]) }
            }
            frames += count
        }
        samples.withUnsafeBufferPointer { input in
            var next: UnsafePointer<Int16>? = input.baseAddress
            var left = input.count
            while left > 0 {
                var produced = Int32(capacity)
                let before = left
                let code = rows.withUnsafeMutableBufferPointer { fe_process_frames(fe, &next, &left, $0.baseAddress, &produced, nil) }
                guard code >= 0 else { return }
                add(Int(produced))
                if produced == 0 && left == before { return }
            }
        }
        var last: Int32 = 0
        if fe_end_utt(fe, block, &last) >= 0 { add(Int(last)) }
        guard frames > 0 else { return [] }
        return sum.map { Float($0 / Double(frames)) }
    }

    /// Where the frames the search saw came from: for each frame the front end passed on (in order), the index of
    /// the 10 ms frame of `samples` it was made from.
    ///
    /// PocketSphinx's voice-activity detector (`-remove_silence`, on by default) drops frames of silence before the
    /// search sees them, and the search numbers the frames it receives, so segment frames count kept frames only.
    /// A word after a second of quiet comes out a good half second early, and after a pause of more than
    /// `-vad_postspeech` inside the utterance, early by that pause. The C API tells neither which frames were
    /// dropped nor (when the whole utterance is processed at once) how many.
    ///
    /// This runs this decoder's front end alone over `samples` as the decoder met them (a new stream; `background`
    /// first, without restarting it, as `SpeechRecognizer.decodeWhole(_:background:)` does), one frame shift at a
    /// time, and counts what comes out: the detector's decisions depend only on the audio and the stream's noise
    /// estimate, so they are the decoder's. Each call outputs nothing, the current frame, or (when the detector
    /// enters speech) the frames it held back before it, which are the latest ones read. Costs a small fraction of
    /// decoding (the front end only); leaves the front end as a decoding of `samples` would. The corresponding C
    /// functions are `fe_get_input_size`, `fe_process_frames` and `fe_end_utt`.
    ///
    /// `earlier`: for a pass that did not start a new stream, the audio its front end ran over before (the first
    /// stretch from a new stream): its noise estimate, and so its detector, start where those left them.
    public func inputFrames(of samples: [Int16], background: [Int16] = [], earlier: [[Int16]] = []) -> [Int] {
        guard let fe = ps_get_fe(decoder), !samples.isEmpty else { return [] }
        let dimension = Int(fe_get_output_size(fe))
        guard dimension > 0 else { return [] }
        var shift: Int32 = 0
        var size: Int32 = 0
        fe_get_input_size(fe, &shift, &size)
        guard shift > 0, size > 0 else { return [] }
        let before = (background.isEmpty ? [] : [background]) + earlier
        if before.isEmpty { fe_start_stream(fe) }
        for (index, stretch) in before.enumerated() { _ = frontEndMean(of: stretch, newStream: index == 0) }
        _ = fe_start_utt(fe)
        // Room for the detector's whole held-back stretch (`-vad_prespeech` frames and the current one) in one call.
        let capacity = max(128, cmd_ln_int_r(ps_get_config(decoder), "-vad_prespeech") + 2)
        let block = UnsafeMutablePointer<mfcc_t>.allocate(capacity: capacity * dimension)
        defer { block.deallocate() }
        var rows: [UnsafeMutablePointer<mfcc_t>?] = (0..<capacity).map { block + $0 * dimension }
        var kept: [Int] = []
        kept.reserveCapacity(samples.count / Int(shift) + 1)
        var fed = 0
        // Whole frames read so far: the first needs `size` samples, each next one `shift` more.
        func read() -> Int { fed >= Int(size) ? 1 + (fed - Int(size)) / Int(shift) : 0 }
        samples.withUnsafeBufferPointer { input in
            guard let base = input.baseAddress else { return }
            while fed < input.count {
                var next: UnsafePointer<Int16>? = base + fed
                let chunk = min(Int(shift), input.count - fed)
                var left = chunk
                var produced = Int32(capacity)
                let code = rows.withUnsafeMutableBufferPointer { fe_process_frames(fe, &next, &left, $0.baseAddress, &produced, nil) }
                guard code >= 0 else { return }
                fed += chunk - left
                let now = read()
                kept.append(contentsOf: max(0, now - Int(produced))..<now)
                if left == chunk { return }
            }
        }
        var last: Int32 = 0
        if fe_end_utt(fe, block, &last) >= 0, last > 0 { kept.append(read()) }
        return kept
    }

    /// The live cepstral mean (CMN) the next frames are normalised with; setting it makes one utterance's
    /// features independent of the ones before. The corresponding C functions are `cmn_live_get` / `cmn_live_set`.
    public var cepstralMean: [Float] {
        get {
            guard let feat = ps_get_feat(decoder), let cmn = feat.pointee.cmn_struct else { return [] }
            var mean = [Float](repeating: 0, count: Int(cmn.pointee.veclen))
            mean.withUnsafeMutableBufferPointer { cmn_live_get(cmn, $0.baseAddress) }
            return mean
        }
        set {
            guard let feat = ps_get_feat(decoder), let cmn = feat.pointee.cmn_struct, newValue.count == Int(cmn.pointee.veclen) else { return }
            newValue.withUnsafeBufferPointer { cmn_live_set(cmn, $0.baseAddress) }
        }
    }
}
