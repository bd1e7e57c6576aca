import HarkAudio

/// The appliance's side of a room's sound, shared by the in-process member (`ApplianceMember`) and the one on
/// another appliance's server (`RemoteRoomMember`): what its speaker was given is the echo canceller's far end for
/// the microphone blocks that follow, in order, and after the loop was away the room's backlog is cut so the
/// speaker stays live. Not thread-safe: its owner keeps it under a lock.
struct EchoPath {
    /// More than this much of the room's sound waiting for the speaker (300 ms; a 100 ms block normally finds
    /// 100 ms) means the loop was away (saying a reply); only the newest `playbackAfterBacklog` (200 ms) is then played.
    static let maximumPlaybackBacklog = RoomAudio.sampleRate * 3 / 10
    static let playbackAfterBacklog = RoomAudio.sampleRate / 5

    /// nil when echo cancellation is off (a headset, or a test).
    var canceller: EchoCanceller?
    /// What the speaker was given and the microphone has not yet been matched against (16 kHz): the far end.
    var played: [Int16] = []

    /// A fresh path (a new room is a new echo path: the canceller starts afresh).
    init(cancelling: Bool) {
        // The loop calls `clean` every 100 ms and must not wait the tens of milliseconds (hundreds in a debug
        // build) a delay estimate takes: it would fall behind the room, and its backlog would be cut.
        var live = EchoCanceller.Configuration()
        live.backgroundEstimation = true
        canceller = cancelling ? try? EchoCanceller(configuration: live) : nil
    }

    /// The microphone block (16 kHz mono) with the echo of what was played meanwhile taken out.
    mutating func clean(_ microphone: PCMBuffer) -> [Int16] {
        let count = microphone.samples.count
        var far = Array(played.prefix(count))
        played.removeFirst(far.count)
        far += [Int16](repeating: 0, count: count - far.count)
        guard let canceller else { return microphone.samples }
        return (try? canceller.process(microphone: microphone, played: PCMBuffer(format: microphone.format, samples: far)).samples) ?? microphone.samples
    }

    /// What of `mix` to play now (the newest part after a backlog), recorded as the far end to come.
    mutating func play(_ mix: [Int16]) -> [Int16] {
        var mix = mix
        if mix.count > Self.maximumPlaybackBacklog { mix.removeFirst(mix.count - Self.playbackAfterBacklog) }
        played += mix
        if played.count > LocalAudio.maximumQueuedSamples { played.removeFirst(played.count - LocalAudio.maximumQueuedSamples) }
        return mix
    }
}
