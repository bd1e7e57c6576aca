import Foundation
import Testing
@testable import HarkDevices
import HarkTestSupport

/// The libgpiod backend. This machine has no GPIO, so only the failure paths run here; the real-line tests run
/// in the VM lane (issue 6) against gpio-sim, found by its label or named by `HARK_TEST_GPIOCHIP`.
@Suite struct GPIODChipTests {
    /// A gpio-sim chip with at least two lines, if the machine has one.
    static let simulatorChip: GPIOChipInfo? = {
        let chips = GPIOChips.list()
        if let named = ProcessInfo.processInfo.environment["HARK_TEST_GPIOCHIP"] {
            return chips.first { $0.name == named || $0.path == named || $0.label == named }
        }
        return chips.first { $0.label.contains("gpio-sim") && $0.lineCount >= 2 && $0.error == nil }
    }()

    @Test func aMissingChipIsNamedAlongWithTheChipsThatExist() {
        let error = caught(GPIOError.self) { try GPIODChip("gpiochip97") }
        guard let error else { return }
        #expect(error.function == "gpiod_chip_open")
        #expect(error.code != 0)
        #expect(error.message.contains("no GPIO chip \"gpiochip97\""))
        let chips = GPIOChips.list()
        if chips.isEmpty {
            #expect(error.message.contains("this machine has no GPIO chips"))
        } else {
            #expect(chips.allSatisfy { error.message.contains($0.name) })
        }
    }

    @Test(arguments: ["/dev/gpiochip97", "97", "no-such-label"])
    func everySpellingOfAMissingChipNamesIt(chip: String) {
        let error = caught(GPIOError.self) { try GPIODChip(chip) }
        #expect(error?.message.contains("\"\(chip)\"") == true)
    }

    @Test func anEmptyChipNameIsRefusedRatherThanOpeningChipZero() {
        let error = caught(GPIOError.self) { try GPIODChip("") }
        #expect(error?.code == EINVAL)
        #expect(error?.message.contains("no GPIO chip given") == true)
    }

    @Test func listingFindsChipDevicesInNumberOrderAndReportsTheOnesItCannotOpen() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hark-gpio-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        for name in ["gpiochip10", "gpiochip2", "gpiochipx", "gpiochip", "ttyS0"] {
            try Data().write(to: dir.appendingPathComponent(name))
        }
        let chips = GPIOChips.list(directory: dir.path)
        #expect(chips.map(\.name) == ["gpiochip2", "gpiochip10"])
        for chip in chips {
            #expect(chip.path == dir.appendingPathComponent(chip.name).path)
            #expect(chip.lines.isEmpty)
            #expect(chip.error?.contains("not a GPIO chip character device") == true)
            #expect(chip.error?.contains("gpiod_chip_open") == true)
        }
        #expect(GPIOChips.list(directory: dir.appendingPathComponent("absent").path).isEmpty)
    }

    @Test func listingThisMachineOnlyReportsChipDevices() {
        for chip in GPIOChips.list() {
            #expect(chip.path.hasPrefix("/dev/gpiochip"))
            #expect(chip.error != nil || chip.lines.count == chip.lineCount)
        }
    }

    // MARK: VM lane: gpio-sim

    @Test(.enabled(if: simulatorChip != nil, "needs a gpio-sim chip: runs in the VM lane (issue 6)"))
    func realOutputsHonourActiveLowAndReadBack() throws {
        let info = try #require(Self.simulatorChip)
        let chip = try GPIODChip(info.name)
        #expect(chip.lineCount == info.lineCount)
        let led = try chip.output(GPIOLineRequest(name: "hark-led", line: .offset(0), activeLow: true, initial: true))
        #expect(try led.read() == true)
        #expect(try Self.simulatedValue(info, offset: 0) == false)
        try led.set(false)
        #expect(try led.read() == false)
        #expect(try Self.simulatedValue(info, offset: 0) == true)

        let busy = caught(GPIOError.self) { try chip.input(GPIOLineRequest(name: "other", line: .offset(0))) }
        #expect(busy?.message.contains("used by \"hark-led\"") == true)
        let range = caught(GPIOError.self) {
            try chip.output(GPIOLineRequest(name: "light", line: .offset(UInt32(info.lineCount) + 5)))
        }
        #expect(range?.message == "light: \(info.name) has \(info.lineCount) lines; offset \(info.lineCount + 5) is out of range")
        let unknown = caught(GPIOError.self) { try chip.output(GPIOLineRequest(name: "light", line: .name("hark-no-such-line"))) }
        #expect(unknown?.code == ENOENT)
    }

    @Test(.enabled(if: simulatorChip != nil, "needs a gpio-sim chip: runs in the VM lane (issue 6)"))
    func realInputsReportDebouncedEdges() throws {
        let info = try #require(Self.simulatorChip)
        let chip = try GPIODChip(info.name)
        try Self.pull(info, offset: 1, up: true)
        let button = try chip.input(GPIOLineRequest(name: "hark-button", line: .offset(1), activeLow: true, debounce: .milliseconds(10)))
        #expect(try button.read() == false)
        #expect(try button.nextEvent(timeout: .milliseconds(50)) == nil)
        try Self.pull(info, offset: 1, up: false)
        #expect(try button.nextEvent(timeout: .seconds(5))?.edge == .pressed)
        try Self.pull(info, offset: 1, up: true)
        #expect(try button.nextEvent(timeout: .seconds(5))?.edge == .released)
    }

    /// gpio-sim's per-line sysfs group: `/sys/bus/gpio/devices/gpiochipN/sim_gpioO/{pull,value}`.
    static func simulatorAttribute(_ info: GPIOChipInfo, offset: Int, _ attribute: String) -> String {
        "/sys/bus/gpio/devices/\(info.name)/sim_gpio\(offset)/\(attribute)"
    }

    static func simulatedValue(_ info: GPIOChipInfo, offset: Int) throws -> Bool {
        let text = try String(contentsOfFile: simulatorAttribute(info, offset: offset, "value"), encoding: .utf8)
        return text.trimmingCharacters(in: .whitespacesAndNewlines) == "1"
    }

    static func pull(_ info: GPIOChipInfo, offset: Int, up: Bool) throws {
        try (up ? "pull-up" : "pull-down").write(toFile: simulatorAttribute(info, offset: offset, "pull"), atomically: false, encoding: .utf8)
    }
}
