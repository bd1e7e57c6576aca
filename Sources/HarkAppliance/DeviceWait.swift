/// A place in whatever limits how many turns run at once (the web server's turn gate), which a turn can give up
/// while it waits for a device and take back after.
public protocol TurnPlace: Sendable {
    /// Gives the place to the next turn in line.
    func leave()
    /// Takes a place, waiting behind the turns already waiting when none is free (so a turn that left one
    /// queues again behind them).
    func enter()
}

/// Waits on a device (a camera frame, another request's picture) without holding a turn's place.
///
/// The web server lets about one turn per core run at a time (`TurnGate`), because turns are CPU work. A turn that
/// waits for the camera's next frame does no work: if it kept its place, one slow device would hold the CPU idle
/// while the other turns queue. The gate binds its place to `place` for the turn it runs; a device wait that
/// goes through `outside` leaves the place for the wait and takes it back after. Elsewhere (the microphone loop,
/// tests) there is no place and `outside` just runs the wait.
public enum DeviceWait {
    /// The running turn's place, bound by the gate for the turn's duration (a task-local, so it is the
    /// current thread's outside a Swift task).
    @TaskLocal public static var place: (any TurnPlace)?

    /// Runs `wait` with the turn's place given up, if it holds one.
    public static func outside<T, E: Error>(_ wait: () throws(E) -> T) throws(E) -> T {
        guard let place else { return try wait() }
        place.leave()
        defer { place.enter() }
        return try wait()
    }
}
