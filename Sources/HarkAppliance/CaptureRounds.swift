import Foundation

/// Pictures asked for at the same time share one capture.
///
/// A camera makes one frame at a time (30 a second for a webcam; `V4L2Camera` lets a few frames settle the
/// exposure before it keeps one, about 0.2 s), so fifty people asking for a picture at once would otherwise wait
/// behind each other's captures, the last one for seconds, and store fifty copies of the same moment. Captures
/// here go in rounds: a request that arrives while no capture is under way starts one at once; one that arrives
/// during a capture waits for it to end and then shares the next capture with every request that arrived
/// meanwhile. So every picture was taken after its request arrived, a burst costs at most two captures, and
/// a lone request is not delayed at all.
///
/// The first request of a round (its leader) captures and stores the picture, with its own turn; the others
/// get the same stored picture (`Share.shared`), and the same failure if the capture fails.
///
/// `@unchecked Sendable`: every stored property is guarded by `condition`.
public final class CaptureRounds: @unchecked Sendable {
    /// What a request got.
    public enum Share: Sendable, Equatable {
        /// This request's round was its own: it captured and stored the picture.
        case took(StoredPicture)
        /// The picture of a round another request led: taken after this request arrived.
        case shared(StoredPicture)

        public var picture: StoredPicture {
            switch self {
            case .took(let picture), .shared(let picture): picture
            }
        }

        /// Whether another request took it.
        public var isShared: Bool {
            if case .shared = self { true } else { false }
        }
    }

    private let condition = NSCondition()
    /// A round's capture is under way.
    private var capturing = false
    /// The round gathering requests for after the current capture, if one is.
    private var gathering: Int?
    private var nextRound = 0
    /// Requests waiting for each round's result, and the results not yet collected by all of them.
    private var members: [Int: Int] = [:]
    private var results: [Int: (result: Result<StoredPicture, DeviceCommandError>, uncollected: Int)] = [:]

    public init() {}

    /// Requests waiting for a round that has not captured yet (a gathering leader and its members); for tests.
    var waitingRequests: Int {
        condition.lock()
        defer { condition.unlock() }
        return members.values.reduce(0, +) + (gathering == nil ? 0 : 1)
    }

    /// Takes a picture with `capture` (capture and store), or shares the next round's (see the type).
    /// Waits go through `DeviceWait.outside`, so a waiting web turn does not hold its place; the lock is never
    /// held while a place is taken back.
    public func take(_ capture: () throws(DeviceCommandError) -> StoredPicture) throws(DeviceCommandError) -> Share {
        condition.lock()
        if let round = gathering {
            // A round is forming behind the current capture: join it and wait for its picture.
            members[round, default: 0] += 1
            let result = DeviceWait.outside { () -> Result<StoredPicture, DeviceCommandError> in
                while results[round] == nil { condition.wait() }
                let entry = results[round]!
                results[round] = entry.uncollected == 1 ? nil : (entry.result, entry.uncollected - 1)
                condition.unlock()
                return entry.result
            }
            return .shared(try result.get())
        }
        let round = nextRound
        nextRound += 1
        if capturing {
            // Lead the next round: it starts when the current capture ends, with whoever arrived meanwhile.
            gathering = round
            DeviceWait.outside {
                while capturing { condition.wait() }
                gathering = nil
                capturing = true
                condition.unlock()
            }
        } else {
            capturing = true
            condition.unlock()
        }

        let result = Result<StoredPicture, DeviceCommandError> { () throws(DeviceCommandError) -> StoredPicture in try capture() }

        condition.lock()
        capturing = false
        if let count = members.removeValue(forKey: round), count > 0 {
            results[round] = (result, count)
        }
        condition.broadcast()
        condition.unlock()
        return .took(try result.get())
    }
}
