/// One line of a `SimulatedGPIOChip`: its physical level and, while requested, who holds it and how.
struct SimulatedGPIOLineState: Sendable {
    /// The line's name (`""` when unnamed): lines can be selected by it.
    let name: String
    /// The electrical level: what an output drives after active-low, what a test sets on an input.
    var physical = false
    /// The request holding the line, `nil` while it is free.
    var holder: Holder?

    struct Holder: Sendable {
        /// Tells this request from a later one on the same line, so a stale release cannot free it.
        let id: UInt64
        let consumer: String
        let direction: GPIOLineInfo.Direction
        let activeLow: Bool
        /// Inputs only: turns the edges tests make into button events.
        var debouncer: Debouncer?
    }

    /// The level as the holder sees it: `true` is active.
    var logical: Bool { physical != (holder?.activeLow ?? false) }

    /// Moves the physical level, and feeds the edge to the holding input's debouncer if it changed.
    mutating func drive(physical level: Bool, at time: Duration) {
        guard level != physical else { return }
        physical = level
        let logical = logical
        holder?.debouncer?.edge(to: logical, at: time)
    }
}
