import CGPIOD
import Foundation

/// An output line requested through libgpiod (v1 or v2, `CGPIOD/shim.h`): the light, the listening LED.
/// Released in `deinit`.
///
/// Active-low is applied by the kernel (v1's `GPIOD_LINE_REQUEST_FLAG_ACTIVE_LOW`, v2's line settings), so `set(true)` drives the
/// line low on an active-low line, and `read()` reports the logical state the kernel reads back.
///
/// `@unchecked Sendable`: the line handle is used only under `lock`; the chip it belongs to is kept alive by
/// `chip` and guards the request and release itself.
public final class GPIODOutput: DigitalOutput, @unchecked Sendable {
    /// The configured device name, also the consumer label the kernel shows for the line.
    public let name: String
    /// The chip the line belongs to, kept open while the line lives.
    public let chip: GPIODChip
    public let offset: UInt32
    public let activeLow: Bool
    private let line: UnsafeMutablePointer<hark_gpio_request>
    private let lineDescription: String
    private let lock = NSLock()

    /// Requests the line as an output driven to `request.initial`.
    /// The corresponding C function is `hark_gpio_request_output` (v1: `gpiod_line_request_output_flags`,
    /// v2: `gpiod_chip_request_lines`).
    public init(chip: GPIODChip, request: GPIOLineRequest) throws(GPIOError) {
        let function = GPIOChips.apiVersion == 1 ? "gpiod_line_request_output_flags" : "gpiod_chip_request_lines"
        let requested = try chip.request(request, function: function, as: "an output") { handle, offset in
            hark_gpio_request_output(handle, offset, request.name, request.activeLow, request.initial)
        }
        self.chip = chip
        name = request.name
        offset = requested.offset
        activeLow = request.activeLow
        line = requested.request
        lineDescription = requested.description
    }

    deinit { chip.release(line) }

    /// Drives the line active (`true`) or inactive. The corresponding C function is `hark_gpio_set_value`.
    public func set(_ active: Bool) throws(GPIOError) {
        lock.lock()
        defer { lock.unlock() }
        if hark_gpio_set_value(line, active) < 0 {
            throw GPIOError.system("gpiod_line_set_value", code: errno, "\(name): cannot set \(lineDescription) \(active ? "on" : "off")")
        }
    }

    /// The line's logical state read back from the kernel. The corresponding C function is `hark_gpio_get_value`.
    public func read() throws(GPIOError) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        let value = hark_gpio_get_value(line)
        if value < 0 {
            throw GPIOError.system("gpiod_line_get_value", code: errno, "\(name): cannot read \(lineDescription)")
        }
        return value != 0
    }
}
