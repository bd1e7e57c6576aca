import Foundation
import HarkAudio
import HarkCore

/// Records an ALSA capture device on a thread of its own, so a check can play into the loopback on the
/// calling thread while the other end is being read in real time.
///
/// `@unchecked Sendable`: `capture` is used only by the recording thread once `start()` has run (and by
/// nobody before), which also closes it; `samples`, `failure`, `stopping`, `running` and `overruns` are
/// touched only with `condition` locked.
final class LoopbackRecorder: @unchecked Sendable {
    let device: String
    private var capture: ALSACapture?
    private var overrunList: [ALSAXrun] = []
    private let condition = NSCondition()
    private var samples: [Int16] = []
    private var failure: (any Error)?
    private var stopping = false
    private var running = false
    private let finished = DispatchSemaphore(value: 0)

    /// Opens `device` for 16 kHz mono capture with a 0.5 s buffer, read 0.1 s at a time: reads smaller than
    /// the buffer, which `ALSACapture` must start itself (alsa-lib starts a prepared capture only for a read
    /// of at least its start threshold, the whole buffer with `snd_pcm_set_params`; before that fix such
    /// reads failed with EIO here). What is played into the loopback must end with more silence than this
    /// buffer holds (`trailingSilence`): see `AudioChecks.speech`.
    init(device: String) throws(ALSAError) {
        self.device = device
        capture = try ALSACapture(device: device, format: .speech, latency: 0.5)
    }

    /// Silence to play after the audio of interest, longer than the capture buffer: at the end of a drain,
    /// snd-aloop hands the capture one timer tick of what its buffer held one buffer length earlier.
    static let trailingSilence = PCMBuffer(format: .speech, samples: [Int16](repeating: 0, count: 12_800))

    /// Frames per read: 0.1 s, a fifth of the buffer.
    static let readFrames = 1_600

    /// Starts reading and returns once the first block has arrived (the device is running).
    func start(timeout: Duration = .seconds(10)) throws {
        let thread = Thread { [self] in self.record() }
        thread.name = "hwcheck capture"
        thread.start()
        condition.lock()
        defer { condition.unlock() }
        let deadline = Date().addingTimeInterval(timeout.timeInterval)
        while !running && failure == nil {
            if !condition.wait(until: deadline) { break }
        }
        if let failure { throw failure }
        guard running else { throw CheckFailure("\(device): no audio within \(timeout) of starting capture") }
    }

    /// Samples recorded so far.
    var count: Int {
        condition.lock()
        defer { condition.unlock() }
        return samples.count
    }

    /// Waits until `seconds` more audio than now has been recorded.
    func record(seconds: Double) throws {
        let target = count + Int(seconds * Double(PCMFormat.speech.sampleRate))
        condition.lock()
        defer { condition.unlock() }
        while samples.count < target && failure == nil {
            if !condition.wait(until: Date().addingTimeInterval(10)) {
                throw CheckFailure("\(device): capture stalled (\(samples.count) of \(target) samples)")
            }
        }
        if let failure { throw failure }
    }

    /// Stops the thread, which closes the device (the next check may open it at once), and returns everything recorded.
    func stop() throws -> PCMBuffer {
        condition.lock()
        stopping = true
        condition.unlock()
        if finished.wait(timeout: .now() + 10) == .timedOut {
            throw CheckFailure("\(device): the capture thread did not stop within 10 s")
        }
        condition.lock()
        defer { condition.unlock() }
        if let failure { throw failure }
        return PCMBuffer(format: .speech, samples: samples)
    }

    /// Overruns the capture recovered from (audio lost): a check that compares audio wants none.
    var overruns: [ALSAXrun] {
        condition.lock()
        defer { condition.unlock() }
        return overrunList
    }

    /// "0" or "2 (0.35 s lost)".
    var overrunSummary: String { overruns.summary() }

    private func record() {
        if let capture { readUntilStopped(capture) }
        // Closed here, before `stop()` returns: the device must be free for whoever opens it next.
        capture = nil
        finished.signal()
    }

    private func readUntilStopped(_ capture: ALSACapture) {
        defer {
            condition.lock()
            overrunList = capture.overruns
            condition.unlock()
        }
        while true {
            condition.lock()
            let stop = stopping
            condition.unlock()
            if stop { return }
            do {
                guard let block = try capture.read(maxFrames: Self.readFrames) else {
                    throw CheckFailure("\(device): capture ended")
                }
                condition.lock()
                samples.append(contentsOf: block.samples)
                running = true
                condition.broadcast()
                condition.unlock()
            } catch {
                condition.lock()
                failure = error
                condition.broadcast()
                condition.unlock()
                return
            }
        }
    }
}
