import Dispatch
import HarkCore

/// A `DispatchSourceTimer` that calls `handler` every `interval` on a queue of its own until cancelled.
///
/// `@unchecked Sendable`: the source is created and resumed in `init` and afterwards only cancelled, which
/// Dispatch allows from any thread.
final class RepeatingTimer: @unchecked Sendable {
    private let source: any DispatchSourceTimer

    init(label: String, interval: Duration, handler: @escaping @Sendable () -> Void) {
        let milliseconds = max(1, Int(interval.timeInterval * 1000))
        source = DispatchSource.makeTimerSource(queue: DispatchQueue(label: label))
        source.schedule(deadline: .now() + .milliseconds(milliseconds), repeating: .milliseconds(milliseconds),
                        leeway: .milliseconds(max(1, milliseconds / 10)))
        source.setEventHandler(handler: handler)
        source.resume()
    }

    func cancel() {
        source.cancel()
    }

    deinit {
        source.cancel()
    }
}
