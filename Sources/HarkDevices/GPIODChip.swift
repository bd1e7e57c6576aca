import CGPIOD
import Foundation

/// A GPIO chip opened through libgpiod 1.6 (the v1 API): `/dev/gpiochipN`. Closed in `deinit`, which runs only
/// once every line requested from it is gone (each line keeps its chip alive: libgpiod's line objects live
/// inside the chip's memory).
///
/// `@unchecked Sendable`: the `gpiod_chip` handle and the line objects it owns are touched only under `lock`
/// (lookups, requests, releases). Value and event calls on a requested line use only that line's own file
/// descriptor, so `GPIODOutput` and `GPIODInput` guard those with their own locks and never block the chip.
public final class GPIODChip: GPIOChip, @unchecked Sendable {
    /// The kernel's name for the chip: `gpiochip0`.
    public let name: String
    /// The driver's label: `pinctrl-bcm2835`, `gpio-sim.0-node0`.
    public let label: String
    /// How many lines the chip has; valid offsets are `0..<lineCount`.
    public let lineCount: Int
    private let handle: OpaquePointer
    private let lock = NSLock()

    /// Opens a chip by name (`gpiochip0`), path (`/dev/gpiochip0`), number (`0`) or label (`pinctrl-bcm2835`).
    /// A missing chip is an error naming it and listing the chips that do exist.
    /// The corresponding C function is `gpiod_chip_open_lookup`.
    public init(_ chip: String) throws(GPIOError) {
        // libgpiod reads an empty string as a number and opens gpiochip0: refuse it instead of guessing.
        guard !chip.isEmpty else {
            throw GPIOError(function: "gpiod_chip_open_lookup", code: EINVAL,
                            message: "no GPIO chip given: name one as gpiochip0, /dev/gpiochip0, 0 or its label; \(GPIOChips.summary())")
        }
        guard let handle = gpiod_chip_open_lookup(chip) else {
            let code = errno
            let failure = GPIOError.system("gpiod_chip_open_lookup", code: code, GPIOChips.openFailure(chip, code: code))
            throw GPIOError(function: failure.function, code: code, message: "\(failure.message); \(GPIOChips.summary())")
        }
        self.handle = handle
        name = String(cString: gpiod_chip_name(handle))
        label = String(cString: gpiod_chip_label(handle))
        lineCount = Int(gpiod_chip_num_lines(handle))
    }

    deinit { gpiod_chip_close(handle) }

    /// Requests `request.line` as an output driven to `request.initial`, active-low if asked.
    /// The corresponding C function is `gpiod_line_request_output_flags`.
    public func output(_ request: GPIOLineRequest) throws(GPIOError) -> any DigitalOutput {
        try GPIODOutput(chip: self, request: request)
    }

    /// Requests `request.line` as an input with events on both edges, active-low if asked.
    /// The corresponding C function is `gpiod_line_request_both_edges_events_flags`.
    public func input(_ request: GPIOLineRequest) throws(GPIOError) -> any DigitalInput {
        try GPIODInput(chip: self, request: request)
    }

    /// Every line of the chip as the kernel describes it now.
    /// The corresponding C functions are `gpiod_chip_get_line` and the `gpiod_line_*` getters.
    public func lines() throws(GPIOError) -> [GPIOLineInfo] {
        lock.lock()
        defer { lock.unlock() }
        return try GPIOChips.lines(of: handle, named: name)
    }

    /// A line found, free and requested: what `GPIODOutput` and `GPIODInput` are built from.
    struct RequestedLine {
        let line: OpaquePointer
        let offset: UInt32
        /// `gpiochip0 offset 3` or `gpiochip0 line "LED" (offset 3)`, for messages.
        let description: String
    }

    /// Finds the line, refuses it when someone holds it (naming them), and requests it with `perform`,
    /// which returns libgpiod's status (negative with `errno` set on failure).
    /// The corresponding C functions are `gpiod_chip_get_line`, `gpiod_chip_find_line`, `gpiod_line_is_used`
    /// and `gpiod_line_consumer`.
    func request(_ request: GPIOLineRequest, function: String, as role: String,
                 perform: (OpaquePointer) -> Int32) throws(GPIOError) -> RequestedLine {
        try GPIOError.validate(request, chip: name)
        lock.lock()
        defer { lock.unlock() }
        let (line, description) = try find(request)
        let offset = gpiod_line_offset(line)
        // Checked before requesting so the error names the holder; the kernel's EBUSY alone would not.
        if gpiod_line_is_used(line) {
            throw GPIOError.busy(line: description, device: request.name, consumer: gpiod_line_consumer(line).map { String(cString: $0) })
        }
        if perform(line) < 0 {
            let code = errno
            if code == EBUSY {
                // Taken between the check and the request: refresh the line's information to name the holder.
                _ = gpiod_line_update(line)
                throw GPIOError.busy(line: description, device: request.name, consumer: gpiod_line_consumer(line).map { String(cString: $0) })
            }
            throw GPIOError.system(function, code: code, "\(request.name): cannot request \(description) as \(role)")
        }
        return RequestedLine(line: line, offset: offset, description: description)
    }

    /// Gives a requested line back to the kernel. The corresponding C function is `gpiod_line_release`.
    func release(_ line: OpaquePointer) {
        lock.lock()
        defer { lock.unlock() }
        gpiod_line_release(line)
    }

    /// The line object for the request's selector, with a description for messages. Called under `lock`.
    private func find(_ request: GPIOLineRequest) throws(GPIOError) -> (OpaquePointer, String) {
        switch request.line {
        case .offset(let offset):
            guard Int(offset) < lineCount else {
                throw GPIOError.offsetOutOfRange(chip: name, lineCount: lineCount, offset: offset, device: request.name)
            }
            guard let line = gpiod_chip_get_line(handle, offset) else {
                throw GPIOError.system("gpiod_chip_get_line", code: errno, "\(request.name): cannot get \(name) offset \(offset)")
            }
            return (line, "\(name) offset \(offset)")
        case .name(let lineName):
            errno = 0
            guard let line = gpiod_chip_find_line(handle, lineName) else {
                let code = errno
                guard code == ENOENT else {
                    throw GPIOError.system("gpiod_chip_find_line", code: code, "\(request.name): cannot search \(name) for line \"\(lineName)\"")
                }
                let named = (try? GPIOChips.lines(of: handle, named: name))?.compactMap(\.name) ?? []
                throw GPIOError.unknownLine(chip: name, name: lineName, device: request.name, namedLines: named)
            }
            return (line, "\(name) line \"\(lineName)\" (offset \(gpiod_line_offset(line)))")
        }
    }
}
