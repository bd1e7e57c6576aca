import CGPIOD
import Foundation

/// A GPIO chip opened through libgpiod, v1 (1.6, Debian 12) or v2 (2.x, Debian 13) as the build found it, via the
/// version-neutral calls of `CGPIOD/shim.h`: `/dev/gpiochipN`. Closed in `deinit`, which runs only once every
/// line requested from it is gone (each line keeps its chip alive: libgpiod v1's line objects live inside the
/// chip's memory).
///
/// `@unchecked Sendable`: the chip handle and the line objects it owns are touched only under `lock`
/// (lookups, requests, releases). Value and event calls on a requested line use only that line's own file
/// descriptor, so `GPIODOutput` and `GPIODInput` guard those with their own locks and never block the chip.
public final class GPIODChip: GPIOChip, @unchecked Sendable {
    /// The kernel's name for the chip: `gpiochip0`.
    public let name: String
    /// The driver's label: `pinctrl-bcm2835`, `gpio-sim.0-node0`.
    public let label: String
    /// How many lines the chip has; valid offsets are `0..<lineCount`.
    public let lineCount: Int
    private let handle: UnsafeMutablePointer<hark_gpio_chip>
    private let lock = NSLock()

    /// Opens a chip by name (`gpiochip0`), path (`/dev/gpiochip0`), number (`0`) or label (`pinctrl-bcm2835`),
    /// as libgpiod v1's `gpiod_chip_open_lookup` did (v2 opens paths only; `GPIOChips.devicePath` does the rest).
    /// A missing chip is an error naming it and listing the chips that do exist.
    /// The corresponding C function is `gpiod_chip_open`.
    public init(_ chip: String) throws(GPIOError) {
        // An empty string would be read as a number (v1 opened gpiochip0): refuse it instead of guessing.
        guard !chip.isEmpty else {
            throw GPIOError(function: "gpiod_chip_open", code: EINVAL,
                            message: "no GPIO chip given: name one as gpiochip0, /dev/gpiochip0, 0 or its label; \(GPIOChips.summary())")
        }
        let opened = GPIOChips.devicePath(for: chip).flatMap { hark_gpio_chip_open($0) }
        guard let handle = opened else {
            let code = errno == 0 ? ENOENT : errno
            let failure = GPIOError.system("gpiod_chip_open", code: code, GPIOChips.openFailure(chip, code: code))
            throw GPIOError(function: failure.function, code: code, message: "\(failure.message); \(GPIOChips.summary())")
        }
        self.handle = handle
        name = GPIOChips.string(handle.pointee.name)
        label = GPIOChips.string(handle.pointee.label)
        lineCount = Int(handle.pointee.num_lines)
    }

    deinit { hark_gpio_chip_close(handle) }

    /// Requests `request.line` as an output driven to `request.initial`, active-low if asked.
    /// The corresponding C function is `hark_gpio_request_output` (`CGPIOD/shim.h`).
    public func output(_ request: GPIOLineRequest) throws(GPIOError) -> any DigitalOutput {
        try GPIODOutput(chip: self, request: request)
    }

    /// Requests `request.line` as an input with events on both edges, active-low if asked.
    /// The corresponding C function is `hark_gpio_request_input` (`CGPIOD/shim.h`).
    public func input(_ request: GPIOLineRequest) throws(GPIOError) -> any DigitalInput {
        try GPIODInput(chip: self, request: request)
    }

    /// Every line of the chip as the kernel describes it now.
    /// The corresponding C function is `hark_gpio_line_info_get` (`CGPIOD/shim.h`).
    public func lines() throws(GPIOError) -> [GPIOLineInfo] {
        lock.lock()
        defer { lock.unlock() }
        return try GPIOChips.lines(of: handle, named: name)
    }

    /// A line found, free and requested: what `GPIODOutput` and `GPIODInput` are built from.
    struct RequestedLine {
        let request: UnsafeMutablePointer<hark_gpio_request>
        let offset: UInt32
        /// `gpiochip0 offset 3` or `gpiochip0 line "LED" (offset 3)`, for messages.
        let description: String
    }

    /// Finds the line, refuses it when someone holds it (naming them), and requests it with `perform`, which
    /// gets the chip and the offset and returns the request (`nil` with `errno` set on failure).
    /// The corresponding C functions are `hark_gpio_find_line` and `hark_gpio_line_info_get`.
    func request(_ request: GPIOLineRequest, function: String, as role: String,
                 perform: (UnsafeMutablePointer<hark_gpio_chip>, UInt32) -> UnsafeMutablePointer<hark_gpio_request>?) throws(GPIOError) -> RequestedLine {
        try GPIOError.validate(request, chip: name)
        lock.lock()
        defer { lock.unlock() }
        let (offset, description) = try find(request)
        // Checked before requesting so the error names the holder; the kernel's EBUSY alone would not.
        let before = try info(offset, description: description, device: request.name)
        if before.used {
            throw GPIOError.busy(line: description, device: request.name, consumer: before.consumer)
        }
        guard let requested = perform(handle, offset) else {
            let code = errno
            if code == EBUSY {
                // Taken between the check and the request: read the line's information again to name the holder.
                let holder = try? info(offset, description: description, device: request.name)
                throw GPIOError.busy(line: description, device: request.name, consumer: holder?.consumer)
            }
            throw GPIOError.system(function, code: code, "\(request.name): cannot request \(description) as \(role)")
        }
        return RequestedLine(request: requested, offset: offset, description: description)
    }

    /// Gives a requested line back to the kernel. The corresponding C function is `hark_gpio_release`.
    func release(_ request: UnsafeMutablePointer<hark_gpio_request>) {
        lock.lock()
        defer { lock.unlock() }
        hark_gpio_release(request)
    }

    /// One line's information now, for the busy check. Called under `lock`.
    private func info(_ offset: UInt32, description: String, device: String) throws(GPIOError) -> GPIOLineInfo {
        var line = hark_gpio_line_info()
        guard hark_gpio_line_info_get(handle, offset, &line) == 0 else {
            throw GPIOError.system(GPIOChips.lineInfoFunction, code: errno, "\(device): cannot get \(description)")
        }
        let consumer = GPIOChips.string(line.consumer)
        return GPIOLineInfo(offset: offset, name: nil, consumer: consumer.isEmpty ? nil : consumer,
                            direction: line.output ? .output : .input, activeLow: line.active_low, used: line.used)
    }

    /// The offset for the request's selector, with a description for messages. Called under `lock`.
    private func find(_ request: GPIOLineRequest) throws(GPIOError) -> (UInt32, String) {
        switch request.line {
        case .offset(let offset):
            guard Int(offset) < lineCount else {
                throw GPIOError.offsetOutOfRange(chip: name, lineCount: lineCount, offset: offset, device: request.name)
            }
            return (offset, "\(name) offset \(offset)")
        case .name(let lineName):
            let found = hark_gpio_find_line(handle, lineName)
            guard found >= 0 else {
                let code = errno
                let function = GPIOChips.apiVersion == 1 ? "gpiod_chip_find_line" : "gpiod_chip_get_line_offset_from_name"
                guard code == ENOENT else {
                    throw GPIOError.system(function, code: code, "\(request.name): cannot search \(name) for line \"\(lineName)\"")
                }
                let named = (try? GPIOChips.lines(of: handle, named: name))?.compactMap(\.name) ?? []
                throw GPIOError.unknownLine(chip: name, name: lineName, device: request.name, namedLines: named)
            }
            return (UInt32(found), "\(name) line \"\(lineName)\" (offset \(found))")
        }
    }
}
