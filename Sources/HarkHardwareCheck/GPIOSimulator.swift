import Foundation

/// The gpio-sim chip seen from the side of the "hardware": the bank's chip name and line names from
/// configfs, and each line's simulated pull (what an external circuit does to the pin) and value through
/// the sysfs group gpio-sim adds to the chip device, `/sys/bus/gpio/devices/gpiochipN/sim_gpioOFFSET/`
/// (Linux 6.1; the same directory as `/sys/devices/platform/gpio-sim.N/gpiochipN/`).
struct GPIOSimulator {
    /// The bank's configfs directory: `/sys/kernel/config/gpio-sim/hark/gpio-bank0`.
    let bank: String
    /// The chip the kernel made of the bank: `gpiochip0`.
    let chip: String
    /// Line offsets by the names configured in `lineN/name`.
    let offsets: [String: UInt32]

    /// Reads the bank's `chip_name` and `lineN/name` entries. The bank must be live.
    init(bank: String) throws(CheckFailure) {
        self.bank = bank
        chip = try Self.read("\(bank)/chip_name")
        guard chip.hasPrefix("gpiochip") else {
            throw CheckFailure("\(bank)/chip_name is \"\(chip)\": the gpio-sim device is not live")
        }
        var offsets: [String: UInt32] = [:]
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: bank)) ?? []
        for entry in entries where entry.hasPrefix("line") {
            guard let offset = UInt32(entry.dropFirst(4)) else { continue }
            let name = try Self.read("\(bank)/\(entry)/name")
            if !name.isEmpty { offsets[name] = offset }
        }
        self.offsets = offsets
    }

    /// The configured line names, in offset order: what an unknown-line error should list.
    var lineNames: [String] { offsets.sorted { $0.value < $1.value }.map(\.key) }

    func offset(_ line: String) throws(CheckFailure) -> UInt32 {
        guard let offset = offsets[line] else {
            throw CheckFailure("\(bank) has no line named \(line) (lines: \(lineNames.joined(separator: ", ")))")
        }
        return offset
    }

    /// `/sys/bus/gpio/devices/gpiochipN/sim_gpioOFFSET`.
    func directory(_ line: String) throws(CheckFailure) -> String {
        "/sys/bus/gpio/devices/\(chip)/sim_gpio\(try offset(line))"
    }

    /// The line's physical level as the simulator sees it: what a requested output drives, or the pull.
    func value(_ line: String) throws(CheckFailure) -> Bool {
        let path = "\(try directory(line))/value"
        switch try Self.read(path) {
        case "1": return true
        case "0": return false
        case let other: throw CheckFailure("\(path) reads \"\(other)\", not 0 or 1")
        }
    }

    /// Pulls the line up (`true`) or down: for an input, as a button to 3.3 V or to ground would.
    func pull(_ line: String, up: Bool) throws(CheckFailure) {
        try Self.write("\(try directory(line))/pull", up ? "pull-up" : "pull-down")
    }

    /// A sysfs or configfs attribute, without its trailing newline.
    static func read(_ path: String) throws(CheckFailure) -> String {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { throw CheckFailure("cannot open \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = Glibc.read(fd, &buffer, buffer.count)
        guard count >= 0 else { throw CheckFailure("cannot read \(path): \(String(cString: strerror(errno)))") }
        return String(decoding: buffer.prefix(count), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Writes an attribute in one `write`, as sysfs expects.
    static func write(_ path: String, _ value: String) throws(CheckFailure) {
        let fd = open(path, O_WRONLY)
        guard fd >= 0 else { throw CheckFailure("cannot open \(path) for writing: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        let bytes = Array(value.utf8)
        let written = Glibc.write(fd, bytes, bytes.count)
        guard written == bytes.count else {
            throw CheckFailure("cannot write \"\(value)\" to \(path): \(String(cString: strerror(errno)))")
        }
    }
}
