import CGPIOD
import Foundation
import Synchronization

/// An input line requested through libgpiod 1.6 with events on both edges, debounced in software: the
/// push-to-talk button. Released in `deinit`.
///
/// Active-low is applied by the kernel (`GPIOD_LINE_REQUEST_FLAG_ACTIVE_LOW`): a button pulling the line to
/// ground reads `true` while pressed, and its falling edge arrives as a rising (activating) event.
///
/// `@unchecked Sendable`: the line handle is used for waiting and reading events only inside `debouncer`'s
/// lock, which also serialises waiting threads; `read()` calls `gpiod_line_get_value` without it, which is
/// safe during a wait because both only use the line's file descriptor. The chip is kept alive by `chip`.
public final class GPIODInput: DigitalInput, @unchecked Sendable {
    /// The configured device name, also the consumer label the kernel shows for the line.
    public let name: String
    /// The chip the line belongs to, kept open while the line lives.
    public let chip: GPIODChip
    public let offset: UInt32
    public let activeLow: Bool
    /// Edges closer together than this are merged into one.
    public let debounce: Duration
    private let line: OpaquePointer
    private let lineDescription: String
    private let debouncer: Mutex<Debouncer>

    /// Requests the line for both-edge events and reads its current state.
    /// The corresponding C functions are `gpiod_line_request_both_edges_events_flags` and `gpiod_line_get_value`.
    public init(chip: GPIODChip, request: GPIOLineRequest) throws(GPIOError) {
        let flags = request.activeLow ? Int32(GPIOD_LINE_REQUEST_FLAG_ACTIVE_LOW) : 0
        let requested = try chip.request(request, function: "gpiod_line_request_both_edges_events_flags", as: "an input with edge events") { line in
            gpiod_line_request_both_edges_events_flags(line, request.name, flags)
        }
        let value = gpiod_line_get_value(requested.line)
        guard value >= 0 else {
            let error = GPIOError.system("gpiod_line_get_value", code: errno, "\(request.name): cannot read \(requested.description)")
            chip.release(requested.line)
            throw error
        }
        self.chip = chip
        name = request.name
        offset = requested.offset
        activeLow = request.activeLow
        debounce = request.debounce
        line = requested.line
        lineDescription = requested.description
        debouncer = Mutex(Debouncer(interval: request.debounce, state: value != 0))
    }

    deinit { chip.release(line) }

    /// `true` while the button is pressed (the line's logical level now, not debounced).
    /// The corresponding C function is `gpiod_line_get_value`.
    public func read() throws(GPIOError) -> Bool {
        try level()
    }

    /// Waits up to `timeout` for the next debounced edge.
    ///
    /// Edges are read as they come; a change is reported once the line has been quiet for `debounce`, with
    /// the level read back from the line then. A burst still settling when `timeout` runs out stays pending
    /// for the next call. The corresponding C functions are `gpiod_line_event_wait` (with a `timespec`),
    /// `gpiod_line_event_read` and `gpiod_line_get_value`.
    public func nextEvent(timeout: Duration) throws(GPIOError) -> ButtonEvent? {
        try debouncer.withLock { (debouncer) throws(GPIOError) -> ButtonEvent? in
            let deadline = Debouncer.deadline(after: timeout)
            while true {
                let now = Debouncer.now()
                let wake = min(deadline, debouncer.settlesAt ?? deadline)
                var wait = Self.timespec(max(wake - now, .zero))
                let ready = gpiod_line_event_wait(line, &wait)
                if ready < 0 {
                    let code = errno
                    if code == EINTR { continue }
                    throw GPIOError.system("gpiod_line_event_wait", code: code, "\(name): cannot wait for an edge on \(lineDescription)")
                }
                if ready > 0 {
                    var event = gpiod_line_event()
                    if gpiod_line_event_read(line, &event) < 0 {
                        throw GPIOError.system("gpiod_line_event_read", code: errno, "\(name): cannot read an edge of \(lineDescription)")
                    }
                    debouncer.edge(to: event.event_type == Int32(GPIOD_LINE_EVENT_RISING_EDGE), at: Self.monotonic(event.ts))
                    // A line that never stops toggling must not hold the caller past its timeout.
                    let now = Debouncer.now()
                    if now >= deadline {
                        return debouncer.next(at: now).map { ButtonEvent(edge: $0.edge, time: Debouncer.date(of: $0.time, now: now)) }
                    }
                    continue
                }
                // Nothing queued: decide a quiet burst by the level the line is at now.
                let after = Debouncer.now()
                if let settles = debouncer.settlesAt, after >= settles,
                   let change = debouncer.next(at: after, level: try level()) {
                    return ButtonEvent(edge: change.edge, time: Debouncer.date(of: change.time, now: after))
                }
                if after >= deadline { return nil }
            }
        }
    }

    private func level() throws(GPIOError) -> Bool {
        let value = gpiod_line_get_value(line)
        if value < 0 {
            throw GPIOError.system("gpiod_line_get_value", code: errno, "\(name): cannot read \(lineDescription)")
        }
        return value != 0
    }

    private static func timespec(_ duration: Duration) -> Glibc.timespec {
        let (seconds, attoseconds) = duration.components
        return Glibc.timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
    }

    /// The event's kernel timestamp on `CLOCK_MONOTONIC`. Kernels before 5.7 stamped v1 events with the
    /// real-time clock; a stamp far from the monotonic now is one of those, and the time of reading replaces it.
    private static func monotonic(_ stamp: Glibc.timespec) -> Duration {
        let time = Duration.seconds(stamp.tv_sec) + .nanoseconds(stamp.tv_nsec)
        let now = Debouncer.now()
        let gap = now - time
        return gap > .seconds(3600) || gap < .seconds(-3600) ? now : time
    }
}
