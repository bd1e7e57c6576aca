import Foundation

/// Up to `capacity` expensive, non-Sendable resources (PocketSphinx decoders) shared by every connection: a
/// borrower has one to itself until it gives it back. Made on first demand, so a server whose clients only
/// ask for text intents never loads an acoustic model.
///
/// `@unchecked Sendable`: `idle` and `made` are only touched under `condition`'s lock, and a resource is in
/// `idle` or in the hands of exactly one borrower, never both, so no two threads use one at once.
public final class ResourcePool<Resource>: @unchecked Sendable {
    public let capacity: Int
    private let make: @Sendable () throws -> Resource
    private let condition = NSCondition()
    private var idle: [Resource] = []
    private var made = 0
    /// Borrowers waiting in `borrow`.
    private var waiting = 0

    public init(capacity: Int, make: @escaping @Sendable () throws -> Resource) {
        self.capacity = max(1, capacity)
        self.make = make
    }

    /// A resource, waiting up to `timeout` seconds for one to be given back when all are lent; nil when
    /// none came. Rethrows the factory's error.
    public func borrow(waitingUpTo timeout: TimeInterval) throws -> Resource? {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        while idle.isEmpty && made >= capacity {
            waiting += 1
            let woken = condition.wait(until: deadline)
            waiting -= 1
            guard woken else {
                condition.unlock()
                return nil
            }
        }
        if let resource = idle.popLast() {
            condition.unlock()
            return resource
        }
        made += 1
        condition.unlock()
        do {
            return try make()
        } catch {
            condition.lock()
            made -= 1
            condition.signal()
            condition.unlock()
            throw error
        }
    }

    /// An idle resource at once, or nil when none is idle or someone is waiting for one (optional work, such
    /// as a partial transcript, gives way). Never makes a new one.
    public func borrowIfUncontended() -> Resource? {
        condition.lock()
        defer { condition.unlock() }
        guard waiting == 0 else { return nil }
        return idle.popLast()
    }

    /// Gives `resource` back for the next borrower.
    public func release(_ resource: Resource) {
        condition.lock()
        idle.append(resource)
        condition.signal()
        condition.unlock()
    }

    /// Resources currently lent out.
    public var lent: Int {
        condition.lock()
        defer { condition.unlock() }
        return made - idle.count
    }
}
