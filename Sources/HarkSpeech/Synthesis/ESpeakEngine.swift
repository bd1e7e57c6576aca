import CEspeakNG
import Foundation

/// The one eSpeak NG of this process: initialisation, exclusive access, voices and the synthesis callback.
///
/// eSpeak NG keeps all its state in process globals (docs/measurements.md): one selected voice, one parameter set,
/// one synthesis callback. Two callers interleaving `espeak_ng_SetVoiceByName` and `espeak_ng_Synthesize`
/// would speak with each other's voice, so every use runs inside `withEngine`, which holds one lock for the
/// whole job; callers select their voice and parameters inside it, every time.
///
/// Why a lock and not a global actor: the public API is synchronous (`synthesize` returns audio, `speak`
/// writes to a blocking `AudioSink`, a recogniser asks for pronunciations while building its dictionary),
/// and eSpeak in `AUDIO_OUTPUT_SYNCHRONOUS` mode calls back on the calling thread until it is done. An actor
/// would have to run each synthesis as one non-suspending step anyway, so it would serialise no better and
/// would force `await` (and `Sendable` sinks) on every caller.
enum ESpeakEngine {
    /// The length of the chunks eSpeak hands the callback: playback can start after the first one.
    static let chunkMilliseconds: Int32 = 60

    /// Guards every eSpeak NG call in the process. `NSLock` is `Sendable`; it is not recursive, so a sink
    /// must not synthesise from inside `write` (it would deadlock).
    private static let lock = NSLock()

    /// The outcome of the single `espeak_Initialize`: the output sample rate (22050 Hz) or why it failed.
    /// A `static let` runs once, thread-safely, on first use; it is first used inside `withEngine`.
    private static let started: Result<Int, ESpeakError> = {
        // DONT_EXIT: without it eSpeak calls exit() when its data directory is missing.
        let rate = espeak_Initialize(AUDIO_OUTPUT_SYNCHRONOUS, chunkMilliseconds, nil, Int32(espeakINITIALIZE_DONT_EXIT))
        guard rate > 0 else {
            return .failure(ESpeakError(function: "espeak_Initialize", code: rate,
                                        message: "eSpeak NG could not start (is its data directory espeak-ng-data installed?)"))
        }
        // Callbacks cannot capture: each synthesis passes its `SynthesisContext` as `user_data`, which
        // eSpeak copies into every event, including the terminator of each chunk's event list.
        espeak_SetSynthCallback { wav, count, events in
            guard let wav, count > 0, let user = events?.pointee.user_data else { return 0 }
            let context = Unmanaged<SynthesisContext>.fromOpaque(user).takeUnretainedValue()
            return context.receive(UnsafeBufferPointer(start: wav, count: Int(count))) ? 0 : 1
        }
        return .success(Int(rate))
    }()

    /// Runs `body` with exclusive use of eSpeak NG, passing the output sample rate (or the reason eSpeak
    /// could not start). Every other function of this type must only be called from inside `body`.
    static func withEngine<T, E: Error>(_ body: (Result<Int, ESpeakError>) throws(E) -> T) throws(E) -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(started)
    }

    /// Selects a voice such as `en-us`, `en` or `en+f3` (language, optionally `+variant`).
    /// The corresponding C function is `espeak_ng_SetVoiceByName`.
    static func select(voice: String) throws(ESpeakError) {
        try ESpeakError.check(espeak_ng_SetVoiceByName(voice), "espeak_ng_SetVoiceByName(\"\(voice)\")")
    }

    /// The corresponding C function is `espeak_ng_SetParameter`.
    static func set(_ parameter: espeak_PARAMETER, _ value: Int) throws(ESpeakError) {
        try ESpeakError.check(espeak_ng_SetParameter(parameter, Int32(value), 0), "espeak_ng_SetParameter")
    }

    /// The installed voices (`variants: false`) or voice variants such as `f3` (`variants: true`).
    /// The corresponding C function is `espeak_ListVoices`.
    static func voices(variants: Bool) -> [ESpeakVoice] {
        func collect(_ list: UnsafeMutablePointer<UnsafePointer<espeak_VOICE>?>?) -> [ESpeakVoice] {
            guard let list else { return [] }
            var voices: [ESpeakVoice] = []
            var index = 0
            while let voice = list[index] {
                voices.append(ESpeakVoice(voice.pointee))
                index += 1
            }
            return voices
        }
        guard variants else { return collect(espeak_ListVoices(nil)) }
        // eSpeak lists variants when asked for the pseudo-language "variant".
        return "variant".withCString { language in
            var spec = espeak_VOICE()
            spec.languages = language
            return collect(espeak_ListVoices(&spec))
        }
    }

    /// Synthesises `text` (UTF-8) with the selected voice and parameters, handing each chunk of 16-bit
    /// mono samples to `receive` as it is produced; `receive` returns false to stop synthesis.
    /// The corresponding C function is `espeak_ng_Synthesize`.
    static func synthesize(_ text: String, receive: @escaping (UnsafeBufferPointer<Int16>) -> Bool) throws(ESpeakError) {
        let context = SynthesisContext(receive: receive)
        let status = withExtendedLifetime(context) {
            text.withCString { cText in
                espeak_ng_Synthesize(cText, strlen(cText) + 1, 0, POS_CHARACTER, 0, UInt32(espeakCHARS_UTF8), nil,
                                     Unmanaged.passUnretained(context).toOpaque())
            }
        }
        if status != ENS_OK { resetReader() }
        try ESpeakError.check(status, "espeak_ng_Synthesize")
    }

    /// Empties eSpeak's text reader after a synthesis that stopped early. eSpeak keeps the characters it
    /// had read ahead but not spoken, and only a new synthesis clears them; `espeak_TextToPhonemes` does
    /// not, so a pronunciation asked for next began with them: "hark" came out `a h A@ k` after a reply
    /// stopped in "And again" (measured with libespeak-ng 1.51; `espeak_ng_Cancel` leaves them too).
    /// Synthesising the empty text runs the reader's start-up and produces no audio; with no
    /// `user_data` the callback ignores whatever it might hand over.
    private static func resetReader() {
        _ = espeak_ng_Synthesize("", 1, 0, POS_CHARACTER, 0, UInt32(espeakCHARS_UTF8), nil, nil)
    }
}

/// What the synthesis callback reaches through `user_data`: the chunk handler of one synthesis. eSpeak
/// calls back synchronously on the synthesising thread, so the context never crosses threads.
final class SynthesisContext {
    let receive: (UnsafeBufferPointer<Int16>) -> Bool

    init(receive: @escaping (UnsafeBufferPointer<Int16>) -> Bool) {
        self.receive = receive
    }
}
