import Foundation
import HarkAppliance
import HarkCore

/// The appliance's events as they are reported, for a driver thread to wait on while the loop runs.
///
/// `@unchecked Sendable`: `events` is touched only with `condition` locked (the loop appends, the driver
/// thread and the main thread read).
final class EventLog: @unchecked Sendable {
    private let condition = NSCondition()
    private var events: [ApplianceEvent] = []
    private let echo: Bool

    /// - Parameter echo: print each event as it arrives (`  event: kind text`), so the VM's output shows the loop.
    init(echo: Bool) { self.echo = echo }

    func append(_ event: ApplianceEvent) {
        if echo { print("    event \(event.kind.rawValue): \(event.text)\(Self.recognition(event))") }
        condition.lock()
        events.append(event)
        condition.broadcast()
        condition.unlock()
    }

    /// For a spoken transcript, how it was heard: " (acoustic 0.93, 1.9 s of audio, decoded in 812 ms)".
    static func recognition(_ event: ApplianceEvent) -> String {
        guard event.kind == .transcript, let acoustic = event.data["acoustic_confidence"]?.doubleValue else { return "" }
        let seconds = event.data["audio_seconds"]?.doubleValue ?? 0
        let decode = event.data["decode_ms"]?.doubleValue ?? 0
        return String(format: " (acoustic %.2f, %.1f s of audio, decoded in %.0f ms)", acoustic, seconds, decode)
    }

    var all: [ApplianceEvent] {
        condition.lock()
        defer { condition.unlock() }
        return events
    }

    /// The texts of every event of `kind`, in order.
    func texts(_ kind: ApplianceEvent.Kind) -> [String] { all.filter { $0.kind == kind }.map(\.text) }

    /// Waits up to `timeout` for an event (from index `after` on) matching `predicate`; returns it or nil.
    func wait(after: Int = 0, upTo timeout: Duration, _ predicate: (ApplianceEvent) -> Bool) -> ApplianceEvent? {
        let deadline = Date().addingTimeInterval(timeout.timeInterval)
        condition.lock()
        defer { condition.unlock() }
        while true {
            if let hit = events.dropFirst(after).first(where: predicate) { return hit }
            if !condition.wait(until: deadline) { return events.dropFirst(after).first(where: predicate) }
        }
    }

    var count: Int {
        condition.lock()
        defer { condition.unlock() }
        return events.count
    }
}
