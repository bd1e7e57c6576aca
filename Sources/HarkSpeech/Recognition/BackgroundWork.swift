import Foundation

/// Work started on a thread of its own, its result and the processor time it took on that thread: the recogniser's
/// passes that run beside the grammar pass (`PhoneLoopPass`, `EnglishReference.start`). @unchecked Sendable: the result
/// and the time are written before `done` is signalled and read only after `wait()`.
final class BackgroundWork<Value>: @unchecked Sendable {
    private var result: Result<Value, any Error>?
    private var seconds = 0.0
    private let done = DispatchSemaphore(value: 0)

    init(_ work: @escaping @Sendable () throws -> Value) {
        Thread.detachNewThread { [self] in
            let clock = DecodeClock()
            result = Result { try work() }
            seconds = clock.elapsed().cpu
            done.signal()
        }
    }

    /// Blocks until the work is done; its result and the processor seconds it took. Call it once.
    func wait() -> (result: Result<Value, any Error>, cpuSeconds: Double) {
        done.wait()
        return (result ?? .failure(CancellationError()), seconds)
    }
}
