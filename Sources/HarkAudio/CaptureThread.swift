import Foundation

/// Reads a live `AudioSource` (a microphone) on a thread that does nothing else, into a bounded queue that
/// `read` hands out from. The device is then read on time however long the consumer spends between two
/// reads (decoding speech, speaking a reply): audio waits in the queue instead of overflowing the device's
/// small ring buffer, where an overrun drops it.
///
/// The queue holds at most `capacity` frames; when the consumer falls further behind than that, the oldest
/// frames are dropped and counted in `droppedFrames` (audio lost as surely as by an overrun, but seen).
/// A source that ends (nil) or throws ends the thread; `read` hands out what was queued, then returns nil
/// or throws the source's error.
///
/// `@unchecked Sendable`: `source` is touched only by the reading thread once `start()` has run;
/// everything else is guarded by `condition`.
public final class CaptureThread: AudioSource, @unchecked Sendable {
    public let format: PCMFormat
    /// Frames per read of the source.
    public let blockFrames: Int
    /// The most frames the queue holds before it drops the oldest.
    public let capacity: Int
    private let source: any AudioSource
    private let condition = NSCondition()
    private var queue: [Int16] = []
    /// Index of the first unread sample in `queue` (consumed samples are removed in batches).
    private var head = 0
    private var ended = false
    private var failure: (any Error)?
    private var stopping = false
    private var started = false
    private var dropped = 0
    private var captured = 0
    private var consumed = 0
    private var deepest = 0
    private var realtime = false
    private let finished = DispatchSemaphore(value: 0)

    /// - Parameters:
    ///   - source: read only by the capture thread from `start()` on.
    ///   - blockFrames: frames per read of the source (0.05 s at its rate when nil).
    ///   - capacity: frames the queue may hold (30 s at its rate when nil).
    public init(_ source: any AudioSource, blockFrames: Int? = nil, capacity: Int? = nil) {
        self.source = source
        format = source.format
        self.blockFrames = max(1, blockFrames ?? source.format.sampleRate / 20)
        self.capacity = max(self.blockFrames, capacity ?? source.format.sampleRate * 30)
    }

    /// Starts the thread. It asks for real-time scheduling (`SCHED_FIFO`, a low priority), which only
    /// privileged processes get; `realtimeScheduling` says whether it did. Calling it again does nothing.
    public func start() {
        condition.lock()
        defer { condition.unlock() }
        guard !started else { return }
        started = true
        let thread = Thread { [self] in self.run() }
        thread.name = "hark capture"
        thread.start()
    }

    /// Blocks until `maxFrames` frames are queued (as a blocking device read does) and returns them; at the
    /// source's end, what is left and then nil; after the source failed, what is left and then its error.
    public func read(maxFrames: Int) throws -> PCMBuffer? {
        guard maxFrames > 0 else { return PCMBuffer(format: format) }
        let channels = format.channels
        condition.lock()
        defer { condition.unlock() }
        while (queue.count - head) / channels < maxFrames && !ended { condition.wait() }
        let available = (queue.count - head) / channels
        if available == 0 {
            if let failure { throw failure }
            return nil
        }
        let frames = min(maxFrames, available)
        let samples = Array(queue[head..<(head + frames * channels)])
        head += frames * channels
        consumed += frames
        if head >= 65_536 || head == queue.count {
            queue.removeFirst(head)
            head = 0
        }
        return PCMBuffer(format: format, samples: samples)
    }

    /// Frames queued and not yet read.
    public var queuedFrames: Int {
        condition.lock()
        defer { condition.unlock() }
        return (queue.count - head) / format.channels
    }

    /// Frames read from the source so far: the stream position of the newest queued frame.
    public var capturedFrames: Int {
        condition.lock()
        defer { condition.unlock() }
        return captured
    }

    /// The stream position the consumer has reached: frames handed out by `read`, plus any dropped.
    /// Audio captured up to `capturedFrames` at some moment has been consumed once this reaches it.
    public var consumedFrames: Int {
        condition.lock()
        defer { condition.unlock() }
        return consumed
    }

    /// Frames dropped because the queue was full (the consumer was more than `capacity` frames behind).
    public var droppedFrames: Int {
        condition.lock()
        defer { condition.unlock() }
        return dropped
    }

    /// The most frames that were ever waiting in the queue: how far behind the consumer fell.
    public var deepestQueue: Int {
        condition.lock()
        defer { condition.unlock() }
        return deepest
    }

    /// Whether the thread got real-time scheduling.
    public var realtimeScheduling: Bool {
        condition.lock()
        defer { condition.unlock() }
        return realtime
    }

    /// Asks the thread to stop after its current read and waits up to `timeout` seconds for it; returns
    /// whether it stopped (the source is then no longer used). Queued audio can still be read.
    @discardableResult
    public func stop(timeout: Double = 5) -> Bool {
        condition.lock()
        let running = started && !ended
        stopping = true
        condition.unlock()
        guard running else { return true }
        return finished.wait(timeout: .now() + timeout) == .success
    }

    private func run() {
        let scheduled = Self.requestRealtime()
        condition.lock()
        realtime = scheduled
        condition.unlock()
        defer { finished.signal() }
        while true {
            condition.lock()
            let stop = stopping
            condition.unlock()
            if stop { break }
            do {
                guard let block = try source.read(maxFrames: blockFrames) else { break }
                append(block.samples)
            } catch {
                condition.lock()
                failure = error
                condition.unlock()
                break
            }
        }
        condition.lock()
        ended = true
        condition.broadcast()
        condition.unlock()
    }

    private func append(_ samples: [Int16]) {
        condition.lock()
        defer { condition.unlock() }
        queue.append(contentsOf: samples)
        let channels = format.channels
        captured += samples.count / channels
        let excess = (queue.count - head) / channels - capacity
        if excess > 0 {
            head += excess * channels
            dropped += excess
            consumed += excess
        }
        if head >= 65_536 {
            queue.removeFirst(head)
            head = 0
        }
        deepest = max(deepest, (queue.count - head) / channels)
        condition.broadcast()
    }

    /// `SCHED_FIFO` at a low real-time priority for the calling thread: it sleeps in the device read almost
    /// all the time and wakes for microseconds, so it cannot starve anything, but is never kept waiting by
    /// busy threads. Refused (EPERM) without the privilege; the thread then runs at normal priority.
    private static func requestRealtime() -> Bool {
        var parameters = sched_param()
        parameters.sched_priority = 10
        return pthread_setschedparam(pthread_self(), Int32(SCHED_FIFO), &parameters) == 0
    }
}
