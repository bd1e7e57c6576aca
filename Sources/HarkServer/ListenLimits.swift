/// How much one push-to-talk socket (`WS /api/listen`) may take, so one browser cannot keep the recogniser
/// from the others.
public struct ListenLimits: Sendable, Equatable {
    /// Audio per turn: more closes the socket with 1009. 30 s is far beyond a spoken command.
    public var maximumAudio: Duration
    /// Silence (no message at all) before the socket is closed with 1008.
    public var idleTimeout: Duration
    /// Time from opening to closing, whatever is sent; then 1008.
    public var maximumSession: Duration

    public init(maximumAudio: Duration = .seconds(30), idleTimeout: Duration = .seconds(10), maximumSession: Duration = .seconds(60)) {
        self.maximumAudio = maximumAudio
        self.idleTimeout = idleTimeout
        self.maximumSession = maximumSession
    }
}
