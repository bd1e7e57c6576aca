import Foundation
import HarkCore
import Synchronization

/// The appliance-wide allowance of wrong pairing codes, on top of the per-address `RateLimiter`: an attacker
/// with many addresses gets `failures` guesses in all per `window`, after which every outstanding code is
/// voided, so no code faces more than that many guesses. With the 6-digit codes and at most
/// `PairingStore.maximumOutstanding` live at once, that bounds the chance of a lucky guess per budget to
/// failures × outstanding / 10⁶.
final class PairingBudget: Sendable {
    let failures: Int
    let window: Duration
    private let recent = Mutex<[Date]>([])

    init(failures: Int, window: Duration) {
        self.failures = max(1, failures)
        self.window = window
    }

    /// Records one wrong code at `t`; true when that exhausts the budget (the caller voids the codes), after
    /// which the count starts again.
    func recordFailure(at t: Date) -> Bool {
        recent.withLock { list in
            let start = t.addingTimeInterval(-window.timeInterval)
            list.removeAll { $0 <= start }
            list.append(t)
            guard list.count >= failures else { return false }
            list.removeAll()
            return true
        }
    }

    /// Wrong codes counted now.
    func count(at t: Date) -> Int {
        recent.withLock { list in
            let start = t.addingTimeInterval(-window.timeInterval)
            return list.filter { $0 > start }.count
        }
    }
}
