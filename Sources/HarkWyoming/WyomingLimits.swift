import Foundation

/// What one client may cost the server: sizes of each part of an event, audio per stream, connections,
/// decoders and time. Every limit, when hit, is an `error` event that names it.
public struct WyomingLimits: Sendable, Equatable {
    /// Longest header line, in bytes. `info` is the largest header Hark reads from HA: a few hundred bytes.
    public var headerBytes = 16 * 1024
    /// Largest `data_length`. HA's largest data is a handle `transcript` carrying a dialog context.
    public var dataBytes = 1024 * 1024
    /// Largest `payload_length`. HA sends 1,024-sample chunks (2 KiB); wyoming-bench sends up to 1 s.
    public var payloadBytes = 1024 * 1024
    /// Audio per stream (transcribe), in seconds of input: a spoken command is under 10 s.
    public var transcribeSeconds = 60.0
    /// Text in one `synthesize`, in characters (about 20 minutes of speech). eSpeak NG is one engine for the
    /// whole process, so one client's endless text would keep everyone else's speech waiting. Streamed text
    /// is spoken a sentence at a time; a "sentence" longer than `sentenceCharacters` is spoken in pieces.
    public var synthesizeCharacters = 20_000
    public var sentenceCharacters = 1_000
    /// Clients connected at once; one more gets an error and is closed.
    public var connections = 32
    /// Recognisers shared by all clients, all built at start-up: about 45 MiB each for home.json, 220 MiB for
    /// the barista grammar (docs/wyoming.md).
    public var recognizers = 2
    /// Wake-phrase spotters: each listening stream holds one for as long as it streams.
    public var wakeSpotters = 4
    /// How long a finished utterance waits for a free recogniser before the client gets a `busy` error.
    public var decoderWait: TimeInterval = 30
    /// Partial transcripts (`transcript-chunk`) while audio arrives. Each decodes the utterance so far on a
    /// second recogniser, which competes with the final decode for the CPU (docs/wyoming.md).
    public var partialTranscripts = true
    /// A client that sends nothing for this long is closed (after an error event).
    public var idleTimeout: TimeInterval = 300
    /// A client that does not read what it is sent for this long is closed.
    public var sendTimeout: TimeInterval = 30

    public init() {}
}
