import CGPIOD
import Foundation
import Synchronization

/// An input line requested through libgpiod (v1 or v2, `CGPIOD/shim.h`) with events on both edges, debounced in software: the
/// push-to-talk button. Released in `deinit`.
///
/// Active-low is applied by the kernel (v1's `GPIOD_LINE_REQUEST_FLAG_ACTIVE_LOW`, v2's line settings): a button pulling the line to
/// ground reads `true` while pressed, and its falling edge arrives as a rising (activating) event.
///
/// `@unchecked Sendable`: the line handle is used for waiting and reading events only inside `debouncer`'s
/// lock, which also serialises waiting threads; `read()` calls `hark_gpio_get_value` without it, which is
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
    private let line: UnsafeMutablePointer<hark_gpio_request>
    private let lineDescription: String
    private let debouncer: Mutex<Debouncer>

    /// Requests the line for both-edge events and reads its current state.
    /// The corresponding C functions are `hark_gpio_request_input` (v1: `gpiod_line_request_both_edges_events_flags`,
    /// v2: `gpiod_chip_request_lines`) and `hark_gpio_get_value`.
    public init(chip: GPIODChip, request: GPIOLineRequest) throws(GPIOError) {
        let function = GPIOChips.apiVersion == 1 ? "gpiod_line_request_both_edges_events_flags" : "gpiod_chip_request_lines"
        let requested = try chip.request(request, function: function, as: "an input with edge events") { handle, offset in
            hark_gpio_request_input(handle, offset, request.name, request.activeLow)
        }
        let value = hark_gpio_get_value(requested.request)
        guard value >= 0 else {
            let error = GPIOError.system(Self.getValueFunction, code: errno, "\(request.name): cannot read \(requested.description)")
            chip.release(requested.request)
            throw error
        }
        self.chip = chip
        name = request.name
        offset = requested.offset
        activeLow = request.activeLow
        debounce = request.debounce
        line = requested.request
        lineDescription = requested.description
        debouncer = Mutex(Debouncer(interval: request.debounce, state: value != 0))
    }

    deinit { chip.release(line) }

    /// `true` while the button is pressed (the line's logical level now, not debounced).
    /// The corresponding C function is `hark_gpio_get_value`.
    public func read() throws(GPIOError) -> Bool {
        try level()
    }

    /// Waits up to `timeout` for the next debounced edge.
    ///
    /// Edges are read as they come; a change is reported once the line has been quiet for `debounce`, with
    /// the level read back from the line then. A burst still settling when `timeout` runs out stays pending
    /// for the next call. The corresponding C functions are `hark_gpio_wait_edge`, `hark_gpio_read_edge` and
    /// `hark_gpio_get_value` (`CGPIOD/shim.h`).
    public func nextEvent(timeout: Duration) throws(GPIOError) -> ButtonEvent? {
        try debouncer.withLock { (debouncer) throws(GPIOError) -> ButtonEvent? in
            let deadline = Debouncer.deadline(after: timeout)
            while true {
                let now = Debouncer.now()
                let wake = min(deadline, debouncer.settlesAt ?? deadline)
                let ready = hark_gpio_wait_edge(line, Self.nanoseconds(max(wake - now, .zero)))
                if ready < 0 {
                    let code = errno
                    if code == EINTR { continue }
                    throw GPIOError.system(Self.waitFunction, code: code, "\(name): cannot wait for an edge on \(lineDescription)")
                }
                if ready > 0 {
                    var rising = false
                    var stamp: Int64 = 0
                    if hark_gpio_read_edge(line, &rising, &stamp) < 0 {
                        throw GPIOError.system(Self.readEdgeFunction, code: errno, "\(name): cannot read an edge of \(lineDescription)")
                    }
                    debouncer.edge(to: rising, at: Self.monotonic(stamp))
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
        let value = hark_gpio_get_value(line)
        if value < 0 {
            throw GPIOError.system(Self.getValueFunction, code: errno, "\(name): cannot read \(lineDescription)")
        }
        return value != 0
    }

    // The libgpiod functions behind the shim's, for errors: the names differ between the two APIs.
    private static let getValueFunction = GPIOChips.apiVersion == 1 ? "gpiod_line_get_value" : "gpiod_line_request_get_value"
    private static let waitFunction = GPIOChips.apiVersion == 1 ? "gpiod_line_event_wait" : "gpiod_line_request_wait_edge_events"
    private static let readEdgeFunction = GPIOChips.apiVersion == 1 ? "gpiod_line_event_read" : "gpiod_line_request_read_edge_events"

    private static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }

    /// The event's kernel timestamp on `CLOCK_MONOTONIC`. Kernels before 5.7 stamped v1 events with the
    /// real-time clock; a stamp far from the monotonic now is one of those, and the time of reading replaces it.
    private static func monotonic(_ stamp: Int64) -> Duration {
        let time = Duration.nanoseconds(stamp)
        let now = Debouncer.now()
        let gap = now - time
        return gap > .seconds(3600) || gap < .seconds(-3600) ? now : time
    }
}
