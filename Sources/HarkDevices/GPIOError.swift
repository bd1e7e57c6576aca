import Foundation

/// A libgpiod failure (or the simulator's equivalent): the C function, `errno`, and what it means here.
public struct GPIOError: Error, Sendable, CustomStringConvertible {
    /// The C function that failed (`gpiod_chip_open_lookup`), or the simulator's operation.
    public var function: String
    /// `errno` as the call left it (0 when the failure is not a system error).
    public var code: Int32
    /// A readable message that names the chip and line: `gpiochip0 offset 17 (light): line busy (…)`.
    public var message: String

    public init(function: String, code: Int32, message: String) {
        self.function = function
        self.code = code
        self.message = message
    }

    public var description: String { message }
}

extension GPIOError {
    /// The C library's wording for `errno` `code`. The corresponding C function is `strerror`.
    static func describe(_ code: Int32) -> String {
        String(cString: strerror(code))
    }

    /// A failed C call: `what`, then the function and `strerror(code)` in parentheses.
    static func system(_ function: String, code: Int32, _ what: String) -> GPIOError {
        GPIOError(function: function, code: code, message: "\(what) (\(function): \(describe(code)))")
    }

    /// `light: gpiochip0 has 8 lines; offset 17 is out of range`.
    static func offsetOutOfRange(chip: String, lineCount: Int, offset: UInt32, device: String) -> GPIOError {
        let lines = lineCount == 1 ? "1 line" : "\(lineCount) lines"
        return GPIOError(function: "gpiod_chip_get_line", code: EINVAL,
                         message: "\(device): \(chip) has \(lines); offset \(offset) is out of range")
    }

    /// `button: gpiochip0 has no line named "BTN" (named lines: LED, PTT)`.
    static func unknownLine(chip: String, name: String, device: String, namedLines: [String]) -> GPIOError {
        let known: String
        if namedLines.isEmpty {
            known = "none of its lines has a name; select the line by offset"
        } else if namedLines.count <= 16 {
            known = "named lines: " + namedLines.joined(separator: ", ")
        } else {
            known = "named lines: " + namedLines.prefix(16).joined(separator: ", ") + ", … (\(namedLines.count) in all)"
        }
        return GPIOError(function: "gpiod_chip_find_line", code: ENOENT,
                         message: "\(device): \(chip) has no line named \"\(name)\" (\(known))")
    }

    /// `led: gpiochip0 offset 3 is busy: used by "light"`; the kernel may hold a line without a label.
    static func busy(line: String, device: String, consumer: String?) -> GPIOError {
        let user = consumer.map { "used by \"\($0)\"" } ?? "used by the kernel or a driver (no consumer label)"
        return GPIOError(function: "gpiod_line_is_used", code: EBUSY, message: "\(device): \(line) is busy: \(user)")
    }

    /// A request the chip was never asked to carry out: an empty device name, a negative debounce.
    static func invalidRequest(_ request: GPIOLineRequest, chip: String, _ problem: String) -> GPIOError {
        let device = request.name.isEmpty ? "(unnamed device)" : request.name
        return GPIOError(function: "gpiod_line_request", code: EINVAL, message: "\(device): \(chip) \(request.line): \(problem)")
    }

    /// Checks what both chips require of a request before touching a line.
    static func validate(_ request: GPIOLineRequest, chip: String) throws(GPIOError) {
        if request.name.isEmpty {
            throw invalidRequest(request, chip: chip, "the device needs a name (it becomes the line's consumer label)")
        }
        if request.debounce < .zero {
            throw invalidRequest(request, chip: chip, "debounce \(request.debounce) is negative")
        }
        if case .name(let name) = request.line, name.isEmpty {
            throw invalidRequest(request, chip: chip, "the line name is empty")
        }
    }
}
