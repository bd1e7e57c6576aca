import Foundation
import HarkAudio

/// Wall-clock and processor time since it was made, for reporting what a decoding cost. The processor time
/// is the calling thread's own (`CLOCK_THREAD_CPUTIME_ID`), so decodings on other threads do not count:
/// make and read it on the thread that decodes.
struct DecodeClock {
    private let wall = DispatchTime.now().uptimeNanoseconds
    private let cpu = ThreadTime.cpuSeconds()

    /// Seconds of wall-clock time and of this thread's processor time since the clock was made.
    func elapsed() -> (wall: Double, cpu: Double) {
        (Double(DispatchTime.now().uptimeNanoseconds - wall) / 1e9, max(0, ThreadTime.cpuSeconds() - cpu))
    }
}
