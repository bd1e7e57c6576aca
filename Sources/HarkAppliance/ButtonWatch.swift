import Foundation
import HarkDevices

/// A thread that waits for the push-to-talk button's edges and posts them to the loop.
final class ButtonWatch: @unchecked Sendable {
    // @unchecked: `stopped` is only touched with `lock` held; the button itself is Sendable.
    private let lock = NSLock()
    private var stopped = false

    init(button: any DigitalInput, triggers: TriggerQueue, failed: @escaping @Sendable (GPIOError) -> Void) {
        let thread = Thread { [self] in
            while !self.isStopped {
                do throws(GPIOError) {
                    guard let event = try button.nextEvent(timeout: .milliseconds(100)) else { continue }
                    triggers.post(event.edge == .pressed ? .buttonPressed : .buttonReleased)
                } catch {
                    failed(error)
                    return
                }
            }
        }
        thread.name = "hark button"
        thread.start()
    }

    private var isStopped: Bool {
        lock.lock()
        defer { lock.unlock() }
        return stopped
    }

    func stop() {
        lock.lock()
        stopped = true
        lock.unlock()
    }
}
