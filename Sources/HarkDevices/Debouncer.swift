import Foundation
import HarkCore

/// Software debouncing for a push button: raw edges in, settled state changes out.
///
/// A mechanical contact bounces for a few milliseconds on every press and release, so one press reaches the
/// kernel as a burst of edges. Edges that come within `interval` of the previous one belong to the same burst;
/// a burst is decided once the line has been quiet for `interval`, and the change reported is the state the
/// line settled in (compared with the last reported state), not the first edge's direction. So a glitch that
/// returns to where it started (a press shorter than `interval`, or an even number of bounces) reports
/// nothing, and a bouncy press reports exactly one `pressed`.
///
/// Times are offsets on one monotonic clock (`Debouncer.now()` is `CLOCK_MONOTONIC`, the clock the kernel
/// stamps GPIO events with), so the debouncer is a pure value that tests drive with explicit timestamps.
struct Debouncer: Sendable {
    /// One decided change of the debounced state.
    struct Change: Sendable, Equatable {
        var edge: ButtonEvent.Edge
        /// When the burst that led to it started: the moment the button was really pressed or released.
        var time: Duration
    }

    /// Edges closer together than this are one burst.
    let interval: Duration
    /// The last reported (debounced) state: `true` is active (pressed).
    private(set) var state: Bool
    /// The undecided burst: when it started, its latest edge, and the level that edge left the line at.
    private var burst: (start: Duration, last: Duration, level: Bool)?
    /// Changes decided but not yet taken by `next`: a burst that ended before a later edge arrived.
    private var decided: [Change] = []

    /// A debouncer whose line is at `state` now. A negative `interval` counts as zero.
    init(interval: Duration, state: Bool) {
        self.interval = max(interval, .zero)
        self.state = state
    }

    /// Records a raw edge: the line went to `level` (`true` active) at `time`.
    mutating func edge(to level: Bool, at time: Duration) {
        if let burst {
            if time - burst.last < interval {
                self.burst = (burst.start, max(burst.last, time), level)
                return
            }
            // The previous burst was already quiet long enough: decide it before this edge starts a new one,
            // so a slow caller does not merge two real presses.
            decide(start: burst.start, level: burst.level)
        }
        burst = (time, time, level)
    }

    /// When the next change can be decided: now for an already decided one, the end of the quiet period for
    /// a burst in progress, `nil` when nothing is pending.
    var settlesAt: Duration? {
        if let first = decided.first { return first.time }
        return burst.map { $0.last + interval }
    }

    /// The next change, if one is decided at `now`.
    ///
    /// - Parameter level: the line's level measured now, if the caller can read it. It overrides the level
    ///   of the burst's last edge, because the kernel's event queue (16 events) can drop edges during heavy
    ///   bounce, and then the last edge read is not where the line is.
    mutating func next(at now: Duration, level: Bool? = nil) -> Change? {
        if decided.isEmpty, let burst, now - burst.last >= interval {
            self.burst = nil
            decide(start: burst.start, level: level ?? burst.level)
        }
        return decided.isEmpty ? nil : decided.removeFirst()
    }

    private mutating func decide(start: Duration, level: Bool) {
        guard level != state else { return }
        state = level
        decided.append(Change(edge: level ? .pressed : .released, time: start))
    }

    /// Now on `CLOCK_MONOTONIC`, the clock of the kernel's GPIO event timestamps (Linux 5.7 and later).
    static func now() -> Duration {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return .seconds(ts.tv_sec) + .nanoseconds(ts.tv_nsec)
    }

    /// `timeout` from now on the monotonic clock. Negative timeouts mean now; absurdly long ones are capped at
    /// about 136 years, so the arithmetic and the `timespec` built from it cannot overflow.
    static func deadline(after timeout: Duration, now: Duration = Debouncer.now()) -> Duration {
        now + min(max(timeout, .zero), .seconds(Int64(UInt32.max)))
    }

    /// The wall-clock time of `time` on the monotonic clock, for `ButtonEvent.time`.
    static func date(of time: Duration, now: Duration = Debouncer.now()) -> Date {
        Date(timeIntervalSinceNow: -(now - time).timeInterval)
    }
}
