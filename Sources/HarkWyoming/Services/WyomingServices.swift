import Foundation
import HarkAppliance
import HarkCore
import HarkSpeech

/// What the Wyoming server offers, each service built by the caller (`hark wyoming` builds them as
/// `hark recognize`, `hark say`, `hark run` and `hark parse` do) and shared by every connection. A service
/// left nil is neither advertised in `info` nor served (its events get an error naming it).
public final class WyomingServices: Sendable {
    /// Speech to text with the workspace's grammar.
    public struct ASR: Sendable {
        /// The model's name in `info` (the workspace's name).
        public var model: String
        public var recognizers: ResourcePool<SpeechRecognizer>
        /// Transcripts under this acoustic confidence are rejected: an empty transcript.
        public var acousticThreshold: Double
        /// The workspace's understanding of speech, when the second reading may answer (`SecondReading.Use.decide`): a
        /// transcript it decided is the reading's words. Nil: always the grammar's sentence.
        public var understanding: SpeechUnderstanding?
        public init(model: String, recognizers: ResourcePool<SpeechRecognizer>, acousticThreshold: Double,
                    understanding: SpeechUnderstanding? = nil) {
            self.model = model
            self.recognizers = recognizers
            self.acousticThreshold = acousticThreshold
            self.understanding = understanding
        }
    }

    /// Text to speech with eSpeak NG.
    public struct TTS: Sendable {
        /// The voice, rate, pitch and volume used unless `synthesize` names a voice.
        public var synthesizer: SpeechSynthesizer
        /// The installed voices, advertised in `info`; `synthesize` may name any of their languages.
        public var voices: [ESpeakVoice]
        public init(synthesizer: SpeechSynthesizer, voices: [ESpeakVoice]) {
            self.synthesizer = synthesizer
            self.voices = voices
        }
    }

    /// The wake phrase.
    public struct Wake: Sendable {
        public var phrase: String
        public var spotters: ResourcePool<WakePhraseSpotter>
        public init(phrase: String, spotters: ResourcePool<WakePhraseSpotter>) {
            self.phrase = phrase
            self.spotters = spotters
        }
        /// The model's name in `info`: the phrase with underscores ("hey_hark"), as wake word ids are written.
        public var model: String { phrase.split(separator: " ").joined(separator: "_") }
    }

    /// Intents and entities of typed text.
    public struct Intent: Sendable {
        public var model: String
        public var matcher: Matcher
        public var threshold: Double
        public init(model: String, matcher: Matcher, threshold: Double) {
            self.model = model
            self.matcher = matcher
            self.threshold = threshold
        }
    }

    /// The dialog, with its actions run on the devices.
    public struct Handle: Sendable {
        public var model: String
        public var turns: TurnRunner
        public var conversations: ConversationContexts
        public init(model: String, turns: TurnRunner, conversations: ConversationContexts = ConversationContexts()) {
            self.model = model
            self.turns = turns
            self.conversations = conversations
        }
    }

    public let asr: ASR?
    public let tts: TTS?
    public let wake: Wake?
    public let intent: Intent?
    public let handle: Handle?
    /// Hark's version, in `info`.
    public let version: String

    public init(asr: ASR? = nil, tts: TTS? = nil, wake: Wake? = nil, intent: Intent? = nil, handle: Handle? = nil, version: String) {
        self.asr = asr
        self.tts = tts
        self.wake = wake
        self.intent = intent
        self.handle = handle
        self.version = version
    }

    /// The services offered, by their `info` key.
    public var offered: [String] {
        [("asr", asr != nil), ("tts", tts != nil), ("wake", wake != nil), ("intent", intent != nil), ("handle", handle != nil)]
            .filter(\.1).map(\.0)
    }
}
