import Foundation

/// Processor time of the calling thread, for threads that measure their own work: the rooms' mixer, a room
/// member's wake listener, the recogniser's decodings.
public enum ThreadTime {
    /// CPU seconds the calling thread has used (`CLOCK_THREAD_CPUTIME_ID`); 0 if the clock cannot be read.
    public static func cpuSeconds() -> Double {
        var time = timespec()
        guard clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time) == 0 else { return 0 }
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}
