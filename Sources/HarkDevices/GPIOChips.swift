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
    /// The corresponding C functions are `gpiod_chip_open` and `hark_gpio_line_info_get` (`CGPIOD/shim.h`).
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

    /// Where the chip called `chip` is: a path as given; a number or a name (`gpiochip0`) under `directory`; or
    /// else the path of the chip whose label it is. `nil` when it is none of these. The order is libgpiod v1's
    /// `gpiod_chip_open_lookup`'s, which v2 dropped.
    static func devicePath(for chip: String, directory: String = "/dev") -> String? {
        if chip.hasPrefix("/") { return chip }
        let isNumber = chip.allSatisfy { $0.isASCII && $0.isNumber }
        let path = (directory.hasSuffix("/") ? directory : directory + "/") + (isNumber ? "gpiochip" + chip : chip)
        if isNumber || FileManager.default.fileExists(atPath: path) { return path }
        return list(directory: directory).first { $0.label == chip }?.path
    }

    /// A short list for error messages: `gpiochip0 [pinctrl-bcm2835] (54 lines), …`, or that there are none.
    static func summary(directory: String = "/dev") -> String {
        let chips = list(directory: directory)
        if chips.isEmpty { return "this machine has no GPIO chips (no \(directory)/gpiochip*)" }
        return "GPIO chips here: " + chips.map(\.description).joined(separator: ", ")
    }

    private static func info(path: String, name: String) -> GPIOChipInfo {
        guard let chip = hark_gpio_chip_open(path) else {
            let code = errno
            return GPIOChipInfo(name: name, path: path, label: "", lineCount: 0, lines: [],
                                error: GPIOError.system("gpiod_chip_open", code: code, openFailure(path, code: code)).message)
        }
        defer { hark_gpio_chip_close(chip) }
        var info = GPIOChipInfo(name: string(chip.pointee.name), path: path, label: string(chip.pointee.label),
                                lineCount: Int(chip.pointee.num_lines), lines: [])
        do {
            info.lines = try lines(of: chip, named: info.name)
        } catch {
            info.error = error.message
        }
        return info
    }

    /// Every line of an open chip. The caller holds whatever lock guards `chip`.
    /// The corresponding C function is `hark_gpio_line_info_get` (`CGPIOD/shim.h`, over either libgpiod).
    static func lines(of chip: UnsafeMutablePointer<hark_gpio_chip>, named name: String) throws(GPIOError) -> [GPIOLineInfo] {
        try (0..<chip.pointee.num_lines).map { (offset) throws(GPIOError) in
            var line = hark_gpio_line_info()
            guard hark_gpio_line_info_get(chip, offset, &line) == 0 else {
                throw GPIOError.system(lineInfoFunction, code: errno, "\(name) offset \(offset): cannot read the line's information")
            }
            let lineName = string(line.name), consumer = string(line.consumer)
            return GPIOLineInfo(offset: offset, name: lineName.isEmpty ? nil : lineName, consumer: consumer.isEmpty ? nil : consumer,
                                direction: line.output ? .output : .input, activeLow: line.active_low, used: line.used)
        }
    }

    /// The libgpiod API this build was compiled against (1 on Debian 12, 2 on Debian 13), from `CGPIOD/shim.h`.
    public static var apiVersion: Int { Int(hark_gpio_api_version()) }

    /// The libgpiod function that reads a line's information, for errors: it differs between the two APIs.
    static var lineInfoFunction: String { apiVersion == 1 ? "gpiod_chip_get_line" : "gpiod_chip_get_line_info" }

    /// A NUL-terminated name the shim copied into a fixed C array (imported as a tuple).
    static func string<T>(_ chars: T) -> String {
        withUnsafeBytes(of: chars) { bytes in
            String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
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
