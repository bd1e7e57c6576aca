import Dispatch
import HarkAppliance
import Synchronization

/// Lets at most `width` web turns run at once and admits the others in the order they arrived.
///
/// Turns run concurrently (each carries its own context), but fifty runnable at once on two cores only share
/// the CPU worse: the device and event-store locks they meet are not fair, so under load some turns waited
/// about a second behind others that arrived later. With about one turn per core running and the rest in a
/// first-come queue, a turn's wait is bounded by the ones ahead of it. A turn that waits for a device (a camera
/// frame) steps out of its place meanwhile (`DeviceWait`) and queues again after.
final class TurnGate: Sendable {
    private struct State {
        var running = 0
        var waiting: [DispatchSemaphore] = []
    }

    let width: Int
    private let state = Mutex(State())

    init(width: Int) {
        self.width = max(1, width)
    }

    /// How many turns wait for a place now.
    var queued: Int { state.withLock { $0.waiting.count } }

    /// Runs `body` once a place is free (at once when fewer than `width` turns run), blocking the caller
    /// (a handler's queue, never the network thread) until then. The place is bound to `DeviceWait.place`
    /// while `body` runs, so a wait for a device inside it gives the place to the next turn meanwhile.
    func run<T>(_ body: () -> T) -> T {
        enter()
        defer { leave() }
        return DeviceWait.$place.withValue(self) { body() }
    }
}

extension TurnGate: TurnPlace {
    func enter() {
        let turn: DispatchSemaphore? = state.withLock { state in
            if state.running < width {
                state.running += 1
                return nil
            }
            let semaphore = DispatchSemaphore(value: 0)
            state.waiting.append(semaphore)
            return semaphore
        }
        turn?.wait()
    }

    /// Gives the place up: straight to the longest waiter, so no newcomer can overtake it.
    func leave() {
        let next: DispatchSemaphore? = state.withLock { state in
            if state.waiting.isEmpty {
                state.running -= 1
                return nil
            }
            return state.waiting.removeFirst()
        }
        next?.signal()
    }
}
