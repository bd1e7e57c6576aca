import Foundation
import HarkDevices

/// GPIO through `GPIODChip` (libgpiod v1 or v2, as built) against gpio-sim: the line the kernel reports is the line Hark drives.
enum GPIOChecks {
    static let all: [HardwareCheck] = [
        HardwareCheck(name: "gpio.output", summary: "GPIODOutput drives a gpio-sim line; sysfs sees the level, active-low inverts it", run: output),
        HardwareCheck(name: "gpio.button", summary: "a pull set through sysfs gives one debounced press and one release on GPIODInput", run: button),
        HardwareCheck(name: "gpio.busy", summary: "a line held by another request or by the kernel is a busy error naming the holder", run: busy),
        HardwareCheck(name: "gpio.missing", summary: "a missing line, offset or chip is an error naming what exists", run: missing),
        HardwareCheck(name: "gpio.header", summary: "without gpio.chip the chip labelled pinctrl-rp1 is chosen by its label, not its number", run: header),
    ]

    /// The second gpio-sim bank the VM's /init makes, labelled as a Pi 5's header chip (`pinctrl-rp1`), beside
    /// the appliance's bank: its chip number is not 0, so only the label can find it.
    static func headerBank(_ sim: GPIOSimulator) -> String {
        URL(fileURLWithPath: sim.bank).deletingLastPathComponent().appendingPathComponent("gpio-bank1").path
    }

    static func header(_ context: CheckContext) throws -> String {
        let bank = headerBank(context.simulator)
        let sim = try GPIOSimulator(bank: bank)
        let label = try GPIOSimulator.read("\(bank)/label")
        try expect(label == "pinctrl-rp1", "\(bank)/label is \"\(label)\", not pinctrl-rp1")
        let chips = GPIOChips.list()
        let choice = try GPIOChips.headerChip(among: chips)
        try expect(choice.chip.name == sim.chip,
                   "chose \(choice.chip) rather than \(sim.chip) [pinctrl-rp1] among \(chips.map(\.description).joined(separator: ", "))")
        let byLabel = try GPIODChip("pinctrl-rp1")
        try expect(byLabel.name == sim.chip, "GPIODChip(\"pinctrl-rp1\") opened \(byLabel.name), not \(sim.chip)")
        let chip = try GPIODChip(choice.chip.path)
        let light = try chip.output(GPIOLineRequest(name: "light", line: .name("GPIO17")))
        try light.set(true)
        try expect(try sim.value("GPIO17"), "set(true) on the chosen chip's GPIO17 left it low")
        try light.set(false)
        try expect(try sim.value("GPIO17") == false, "set(false) on the chosen chip's GPIO17 left it high")
        return "\(choice.description); GPIO17 on it set on/off → sysfs 1,0"
    }

    static func output(_ context: CheckContext) throws -> String {
        let sim = context.simulator
        let chip = try GPIODChip(sim.chip)
        try expect(chip.label.hasPrefix("gpio-sim"), "\(chip.name) is labelled \"\(chip.label)\", not gpio-sim's")
        let light = try chip.output(GPIOLineRequest(name: "light", line: .name("LIGHT")))
        let offset = try sim.offset("LIGHT")
        try expect(try sim.value("LIGHT") == false, "LIGHT is high before it was switched on")
        var seen: [String] = []
        for state in [true, false, true, false] {
            try light.set(state)
            let level = try sim.value("LIGHT")
            try expect(level == state, "set(\(state)) left sim_gpio\(offset)/value at \(level ? 1 : 0)")
            try expect(try light.read() == state, "set(\(state)) then read() gave \(!state)")
            seen.append(level ? "1" : "0")
        }
        // An LED wired to 3.3 V lights when the pin is low: "on" must drive 0 V.
        let led = try chip.output(GPIOLineRequest(name: "led", line: .name("LED"), activeLow: true))
        try expect(try sim.value("LED") == true, "active-low LED created off, but the pin is low (lit)")
        try led.set(true)
        try expect(try sim.value("LED") == false, "active-low LED set on, but the pin is high")
        try expect(try led.read(), "active-low LED set on, but read() says off")
        return "\(chip.name) [\(chip.label)] LIGHT offset \(offset): set on/off/on/off → sysfs value \(seen.joined(separator: ",")); "
            + "active-low LED on → pin 0"
    }

    static func button(_ context: CheckContext) throws -> String {
        let sim = context.simulator
        // Released: the button's pull-up holds the line high, before the line is requested.
        try sim.pull("BUTTON", up: true)
        let chip = try GPIODChip(sim.chip)
        let debounce = Duration.milliseconds(80)
        let button = try chip.input(GPIOLineRequest(name: "button", line: .name("BUTTON"), activeLow: true, debounce: debounce))
        try expect(try button.read() == false, "BUTTON pulled up (released) reads pressed")
        if let early = try button.nextEvent(timeout: .milliseconds(200)) {
            throw CheckFailure("an edge before anything changed: \(early.edge.rawValue)")
        }
        var lines: [String] = []
        // Contact bounce: three edges back to back, then the line settles. Debounced, that is one edge.
        for (edge, pulls) in [(ButtonEvent.Edge.pressed, [false, true, false]), (.released, [true, false, true])] {
            let clock = ContinuousClock()
            let start = clock.now
            for up in pulls { try sim.pull("BUTTON", up: up) }
            guard let event = try button.nextEvent(timeout: .seconds(5)) else {
                throw CheckFailure("no \(edge.rawValue) event within 5 s of pulling BUTTON \(pulls.last == true ? "up" : "down")")
            }
            let latency = clock.now - start
            try expect(event.edge == edge, "expected \(edge.rawValue), got \(event.edge.rawValue)")
            if let extra = try button.nextEvent(timeout: .milliseconds(400)) {
                throw CheckFailure("bounce leaked through the \(debounce) debounce: a second event (\(extra.edge.rawValue)) after \(edge.rawValue)")
            }
            try expect(try button.read() == (edge == .pressed), "after \(edge.rawValue) read() disagrees")
            lines.append("\(edge.rawValue) after \(Int(latency / .milliseconds(1))) ms")
        }
        return "BUTTON (active low, pull-up) bounced 3× per edge → one \(lines.joined(separator: ", one ")) (debounce \(debounce))"
    }

    static func busy(_ context: CheckContext) throws -> String {
        let sim = context.simulator
        let chip = try GPIODChip(sim.chip)
        let light = try chip.output(GPIOLineRequest(name: "light", line: .name("LIGHT")))
        // A second open of the chip: the kernel, not this process's bookkeeping, must say the line is taken.
        let other = try GPIODChip(sim.chip)
        let taken = try expectError(GPIOError.self, "requesting LIGHT while \"light\" holds it") {
            _ = try other.output(GPIOLineRequest(name: "lamp", line: .name("LIGHT")))
        }
        try expect(taken.code == EBUSY, "busy LIGHT: errno \(taken.code), expected EBUSY")
        try expect(taken.message.contains("lamp") && taken.message.contains("\"light\""), "busy LIGHT: the message does not name both: \(taken.message)")
        let hogged = try expectError(GPIOError.self, "requesting HOG, which the kernel hogs") {
            _ = try other.input(GPIOLineRequest(name: "button", line: .name("HOG")))
        }
        try expect(hogged.code == EBUSY, "hogged line: errno \(hogged.code), expected EBUSY")
        try expect(hogged.message.contains("kernel-hog"), "hogged line: the message does not name the hog: \(hogged.message)")
        try light.set(true)
        try expect(try sim.value("LIGHT"), "the holder lost LIGHT after the refused request")
        try light.set(false)
        return "\(taken.message) | \(hogged.message)"
    }

    static func missing(_ context: CheckContext) throws -> String {
        let sim = context.simulator
        let chip = try GPIODChip(sim.chip)
        let unnamed = try expectError(GPIOError.self, "requesting a line named FAN") {
            _ = try chip.output(GPIOLineRequest(name: "fan", line: .name("FAN")))
        }
        try expect(unnamed.code == ENOENT, "missing line: errno \(unnamed.code), expected ENOENT")
        let listed = sim.lineNames.joined(separator: ", ")
        try expect(unnamed.message.contains("FAN") && unnamed.message.contains(listed),
                   "missing line: the message does not name FAN and list \(listed): \(unnamed.message)")
        let beyond = try expectError(GPIOError.self, "requesting offset 42 of an 8-line chip") {
            _ = try chip.output(GPIOLineRequest(name: "fan", line: .offset(42)))
        }
        try expect(beyond.message.contains("\(chip.lineCount) lines") && beyond.message.contains("42"),
                   "offset out of range: the message does not give the line count: \(beyond.message)")
        let absent = try expectError(GPIOError.self, "opening gpiochip9") { _ = try GPIODChip("gpiochip9") }
        try expect(absent.code == ENOENT, "missing chip: errno \(absent.code), expected ENOENT")
        try expect(absent.message.contains("gpiochip9") && absent.message.contains(sim.chip),
                   "missing chip: the message does not name gpiochip9 and the chips that exist: \(absent.message)")
        return "\(unnamed.message) | \(beyond.message) | \(absent.message)"
    }
}
