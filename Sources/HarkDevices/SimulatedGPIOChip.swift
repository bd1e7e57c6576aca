import Foundation

/// An in-memory GPIO chip implementing the same protocols and errors as `GPIODChip`: for tests and for a
/// machine without GPIO (`hark chat` still switches a "light").
///
/// Lines are named at creation and their offsets are their indexes. A line held by one request is busy for
/// the next until the holder is released (dropped). Tests drive inputs with `setInput` and `bounce`, which
/// go through the same `Debouncer` as the real chip, and read outputs' electrical level with `value(of:)`.
///
/// `@unchecked Sendable`: all state (`lines`, `nextID`) is touched only while holding `condition`, which
/// also wakes inputs waiting in `nextEvent` when a test moves a line.
public final class SimulatedGPIOChip: GPIOChip, @unchecked Sendable {
    /// `simulated`, or the name given.
    public let name: String
    private let condition = NSCondition()
    private var lines: [SimulatedGPIOLineState]
    private var nextID: UInt64 = 0

    /// A chip with one line per name (offset = index; `""` for an unnamed line), all low and free.
    public init(name: String = "simulated", lines: [String]) {
        self.name = name
        self.lines = lines.map { SimulatedGPIOLineState(name: $0) }
    }

    /// Requests `request.line` as an output driven to `request.initial` (after active-low).
    public func output(_ request: GPIOLineRequest) throws(GPIOError) -> any DigitalOutput {
        let offset = try claim(request, direction: .output)
        return SimulatedGPIOLineOutput(chip: self, name: request.name, offset: offset.offset, id: offset.id)
    }

    /// Requests `request.line` as an input whose edges are debounced by `request.debounce`.
    public func input(_ request: GPIOLineRequest) throws(GPIOError) -> any DigitalInput {
        let offset = try claim(request, direction: .input)
        return SimulatedGPIOLineInput(chip: self, name: request.name, offset: offset.offset, id: offset.id)
    }

    // MARK: Test hooks

    /// The electrical level of the line (an output's after active-low), or `nil` when the chip has no such line.
    public func value(of line: GPIOLineSelector) -> Bool? {
        locked { () -> Bool? in
            guard let offset = try? find(line, device: "value(of:)") else { return nil }
            return lines[offset].physical
        }
    }

    /// Sets the electrical level of an input line, as a button or a pull resistor would; a change is an edge
    /// for the input holding the line. Works on free lines too (to give a button its idle level before it is
    /// requested); refused on a line held as an output.
    public func setInput(_ line: GPIOLineSelector, physical level: Bool) throws(GPIOError) {
        try drive(line, operation: "setInput") { (state: inout SimulatedGPIOLineState) in
            state.drive(physical: level, at: Debouncer.now())
        }
    }

    /// Contact bounce: flips the input's electrical level `transitions` times in quick succession. An odd
    /// count leaves the line changed (a bouncy press or release), an even count where it was (a glitch).
    public func bounce(_ line: GPIOLineSelector, transitions: Int) throws(GPIOError) {
        guard transitions >= 0 else {
            throw GPIOError(function: "bounce", code: EINVAL, message: "\(name) \(line): transitions must not be negative (got \(transitions))")
        }
        try drive(line, operation: "bounce") { (state: inout SimulatedGPIOLineState) in
            for _ in 0..<transitions { state.drive(physical: !state.physical, at: Debouncer.now()) }
        }
    }

    /// The chip as `GPIOChips.list()` would describe it.
    public var info: GPIOChipInfo {
        locked {
            let described = lines.enumerated().map { offset, state in
                GPIOLineInfo(offset: UInt32(offset), name: state.name.isEmpty ? nil : state.name, consumer: state.holder?.consumer,
                             direction: state.holder?.direction ?? .input, activeLow: state.holder?.activeLow ?? false,
                             used: state.holder != nil)
            }
            return GPIOChipInfo(name: name, path: name, label: "simulated", lineCount: lines.count, lines: described)
        }
    }

    // MARK: Used by the line objects

    func setOutput(offset: Int, active: Bool) {
        locked {
            let activeLow = lines[offset].holder?.activeLow ?? false
            lines[offset].drive(physical: active != activeLow, at: Debouncer.now())
        }
    }

    func logicalLevel(offset: Int) -> Bool {
        locked { lines[offset].logical }
    }

    /// Waits on `condition` until the input's debouncer decides a change or `timeout` runs out.
    func nextEvent(offset: Int, timeout: Duration) -> ButtonEvent? {
        condition.lock()
        defer { condition.unlock() }
        let deadline = Debouncer.deadline(after: timeout)
        while true {
            let now = Debouncer.now()
            let level = lines[offset].logical
            guard var debouncer = lines[offset].holder?.debouncer else { return nil }
            let change = debouncer.next(at: now, level: level)
            lines[offset].holder?.debouncer = debouncer
            if let change { return ButtonEvent(edge: change.edge, time: Debouncer.date(of: change.time, now: now)) }
            if now >= deadline { return nil }
            let wake = min(deadline, debouncer.settlesAt ?? deadline) - now
            let (seconds, attoseconds) = wake.components
            _ = condition.wait(until: Date(timeIntervalSinceNow: Double(seconds) + Double(attoseconds) * 1e-18))
        }
    }

    func release(offset: Int, id: UInt64) {
        locked {
            if lines[offset].holder?.id == id { lines[offset].holder = nil }
        }
    }

    // MARK: Private

    private func locked<T>(_ body: () throws(GPIOError) -> T) throws(GPIOError) -> T {
        condition.lock()
        defer { condition.unlock() }
        return try body()
    }

    private func locked<T>(_ body: () -> T) -> T {
        condition.lock()
        defer { condition.unlock() }
        return body()
    }

    /// Finds a free line for the request and holds it, with the same errors as `GPIODChip`.
    private func claim(_ request: GPIOLineRequest, direction: GPIOLineInfo.Direction) throws(GPIOError) -> (offset: Int, id: UInt64) {
        try GPIOError.validate(request, chip: name)
        return try locked { () throws(GPIOError) -> (offset: Int, id: UInt64) in
            let offset = try find(request.line, device: request.name)
            if let holder = lines[offset].holder {
                throw GPIOError.busy(line: describe(offset, as: request.line), device: request.name, consumer: holder.consumer)
            }
            nextID += 1
            lines[offset].holder = .init(id: nextID, consumer: request.name, direction: direction, activeLow: request.activeLow)
            switch direction {
            case .output:
                lines[offset].drive(physical: request.initial != request.activeLow, at: Debouncer.now())
            case .input:
                let level = lines[offset].logical
                lines[offset].holder?.debouncer = Debouncer(interval: request.debounce, state: level)
            }
            return (offset, nextID)
        }
    }

    /// Applies a test's change to an input line and wakes the waiting input.
    private func drive(_ line: GPIOLineSelector, operation: String,
                       _ change: (inout SimulatedGPIOLineState) -> Void) throws(GPIOError) {
        try locked { () throws(GPIOError) in
            let offset = try find(line, device: operation)
            if let holder = lines[offset].holder, holder.direction == .output {
                throw GPIOError(function: operation, code: EPERM,
                                message: "\(operation): \(describe(offset, as: line)) is an output driven by \"\(holder.consumer)\"; only inputs can be set")
            }
            change(&lines[offset])
            condition.broadcast()
        }
    }

    /// The offset a selector means. Called with `condition` held.
    private func find(_ line: GPIOLineSelector, device: String) throws(GPIOError) -> Int {
        switch line {
        case .offset(let offset):
            guard Int(offset) < lines.count else {
                throw GPIOError.offsetOutOfRange(chip: name, lineCount: lines.count, offset: offset, device: device)
            }
            return Int(offset)
        case .name(let lineName):
            guard !lineName.isEmpty, let offset = lines.firstIndex(where: { $0.name == lineName }) else {
                throw GPIOError.unknownLine(chip: name, name: lineName, device: device, namedLines: lines.map(\.name).filter { !$0.isEmpty })
            }
            return offset
        }
    }

    /// `simulated offset 3` or `simulated line "LED" (offset 3)`, as `GPIODChip` says it.
    private func describe(_ offset: Int, as selector: GPIOLineSelector) -> String {
        if case .name(let lineName) = selector { return "\(name) line \"\(lineName)\" (offset \(offset))" }
        return "\(name) offset \(offset)"
    }
}
