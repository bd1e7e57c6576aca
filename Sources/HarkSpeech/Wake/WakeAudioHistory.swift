/// The most recent samples of a stream, addressed by their position in the whole stream: what the wake
/// spotter's second pass decodes again, and where the command audio after the phrase comes from.
struct WakeAudioHistory {
    /// How many samples are kept between calls to `trim()`.
    let capacity: Int
    /// Stream position of `samples[0]`.
    private(set) var firstIndex = 0
    private(set) var samples: [Int16] = []

    init(capacity: Int) { self.capacity = capacity }

    /// Stream position just after the last sample.
    var endIndex: Int { firstIndex + samples.count }

    mutating func append(_ new: ArraySlice<Int16>) { samples.append(contentsOf: new) }

    /// Drops all but the last `capacity` samples. Called between buffers, not inside one, so a detection
    /// may hand over everything its own buffer brought however large it was.
    mutating func trim() {
        let excess = samples.count - capacity
        guard excess > 0 else { return }
        samples.removeFirst(excess)
        firstIndex += excess
    }

    /// The kept samples in stream positions `from..<to`, clamped to what is kept.
    func slice(from: Int, to: Int) -> ArraySlice<Int16> {
        let lower = min(max(from, firstIndex), endIndex) - firstIndex
        let upper = min(max(to, firstIndex), endIndex) - firstIndex
        return samples[lower..<max(lower, upper)]
    }

    /// Stream samples `from..<to`, with zeros for any part the history does not hold (before the stream began,
    /// already trimmed, or not yet heard): always `to - from` samples.
    func padded(from: Int, to: Int) -> [Int16] {
        let kept = slice(from: from, to: to)
        let before = max(0, min(to, firstIndex) - from)
        let after = max(0, (to - from) - before - kept.count)
        var samples = [Int16](repeating: 0, count: before)
        samples.append(contentsOf: kept)
        samples.append(contentsOf: [Int16](repeating: 0, count: after))
        return samples
    }

    mutating func removeAll() {
        samples.removeAll(keepingCapacity: true)
        firstIndex = 0
    }
}
