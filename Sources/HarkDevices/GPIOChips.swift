import CGPIOD
import Foundation

/// One line of a GPIO chip as the kernel describes it (`gpioinfo`'s columns).
public struct GPIOLineInfo: Sendable, Equatable {
    public enum Direction: String, Sendable { case input, output }
    public var offset: UInt32
    /// The line's name from the device tree or gpio-sim, `nil` when it has none.
    public var name: String?
    /// Who holds the line (`light`, a kernel driver), `nil` when nobody labelled it.
    public var consumer: String?
    public var direction: Direction
    public var activeLow: Bool
    /// Requested by a process or claimed by the kernel.
    public var used: Bool

    public init(offset: UInt32, name: String?, consumer: String?, direction: Direction, activeLow: Bool, used: Bool) {
        self.offset = offset
        self.name = name
        self.consumer = consumer
        self.direction = direction
        self.activeLow = activeLow
        self.used = used
    }
}

/// One GPIO chip and its lines, for `hark devices`.
public struct GPIOChipInfo: Sendable, Equatable, CustomStringConvertible {
    /// The kernel's name: `gpiochip0` (or `simulated`).
    public var name: String
    /// `/dev/gpiochip0`, or `simulated`.
    public var path: String
    /// The driver's label: `pinctrl-bcm2835`, `gpio-sim.0-node0`.
    public var label: String
    public var lineCount: Int
    public var lines: [GPIOLineInfo]
    /// Why the chip or one of its lines could not be read (permission denied): the entry is still listed,
    /// so a chip the user cannot open is not silently missing.
    public var error: String?

    public init(name: String, path: String, label: String, lineCount: Int, lines: [GPIOLineInfo], error: String? = nil) {
        self.name = name
        self.path = path
        self.label = label
        self.lineCount = lineCount
        self.lines = lines
        self.error = error
    }

    /// `gpiochip0 [pinctrl-bcm2835] (54 lines)`, as `gpiodetect` prints it.
    public var description: String {
        if let error, lines.isEmpty, lineCount == 0 { return "\(name) (\(path)): \(error)" }
        return "\(name) [\(label)] (\(lineCount) \(lineCount == 1 ? "line" : "lines"))"
    }
}

/// The GPIO chips of this machine.
public enum GPIOChips {
    /// Every `gpiochipN` character device in `directory` (the kernel's `/dev`), in chip-number order, with all
    /// its lines. Empty on a machine without GPIO. A chip that cannot be opened is listed with `error` set.
    /// The corresponding C functions are `gpiod_chip_open`, `gpiod_chip_get_line` and the `gpiod_line_*` getters.
    public static func list(directory: String = "/dev") -> [GPIOChipInfo] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        let chips = entries.compactMap { entry -> (number: Int, name: String)? in
            guard entry.hasPrefix("gpiochip"), let number = Int(entry.dropFirst("gpiochip".count)), number >= 0 else { return nil }
            return (number, entry)
        }
        return chips.sorted { $0.number < $1.number }.map { chip in
            info(path: directory.hasSuffix("/") ? directory + chip.name : directory + "/" + chip.name, name: chip.name)
        }
    }

    /// A short list for error messages: `gpiochip0 [pinctrl-bcm2835] (54 lines), …`, or that there are none.
    static func summary(directory: String = "/dev") -> String {
        let chips = list(directory: directory)
        if chips.isEmpty { return "this machine has no GPIO chips (no \(directory)/gpiochip*)" }
        return "GPIO chips here: " + chips.map(\.description).joined(separator: ", ")
    }

    private static func info(path: String, name: String) -> GPIOChipInfo {
        guard let chip = gpiod_chip_open(path) else {
            let code = errno
            return GPIOChipInfo(name: name, path: path, label: "", lineCount: 0, lines: [],
                                error: GPIOError.system("gpiod_chip_open", code: code, openFailure(path, code: code)).message)
        }
        defer { gpiod_chip_close(chip) }
        var info = GPIOChipInfo(name: String(cString: gpiod_chip_name(chip)), path: path,
                                label: String(cString: gpiod_chip_label(chip)), lineCount: Int(gpiod_chip_num_lines(chip)), lines: [])
        do {
            info.lines = try lines(of: chip, named: info.name)
        } catch {
            info.error = error.message
        }
        return info
    }

    /// Every line of an open chip. The caller holds whatever lock guards `chip`.
    static func lines(of chip: OpaquePointer, named name: String) throws(GPIOError) -> [GPIOLineInfo] {
        try (0..<gpiod_chip_num_lines(chip)).map { (offset) throws(GPIOError) in
            guard let line = gpiod_chip_get_line(chip, offset) else {
                throw GPIOError.system("gpiod_chip_get_line", code: errno, "\(name) offset \(offset): cannot read the line's information")
            }
            return GPIOLineInfo(offset: offset, name: gpiod_line_name(line).map { String(cString: $0) },
                                consumer: gpiod_line_consumer(line).map { String(cString: $0) },
                                direction: gpiod_line_direction(line) == Int32(GPIOD_LINE_DIRECTION_OUTPUT) ? .output : .input,
                                activeLow: gpiod_line_active_state(line) == Int32(GPIOD_LINE_ACTIVE_STATE_LOW),
                                used: gpiod_line_is_used(line))
        }
    }

    /// What an `errno` from opening a chip means to someone choosing one.
    static func openFailure(_ chip: String, code: Int32) -> String {
        switch code {
        case EACCES, EPERM: "permission denied opening GPIO chip \"\(chip)\" (is the user in the 'gpio' group?)"
        case ENOTTY, ENODEV: "\"\(chip)\" is not a GPIO chip character device"
        case ENOENT: "no GPIO chip \"\(chip)\""
        default: "cannot open GPIO chip \"\(chip)\""
        }
    }
}
