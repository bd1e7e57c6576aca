import Foundation
import Testing
@testable import HarkDevices
import HarkTestSupport

/// The in-memory chip: outputs, debounced inputs, and the same errors as the libgpiod chip.
@Suite struct GPIOSimulatedChipTests {
    static func chip() -> SimulatedGPIOChip {
        SimulatedGPIOChip(lines: ["LIGHT", "LED", "BUTTON", ""])
    }

    // MARK: Outputs

    @Test func anOutputIsSetAndReadBack() throws {
        let chip = Self.chip()
        let light = try chip.output(GPIOLineRequest(name: "light", line: .name("LIGHT")))
        #expect(light.name == "light")
        #expect(try light.read() == false)
        #expect(chip.value(of: .offset(0)) == false)
        try light.set(true)
        #expect(try light.read() == true)
        #expect(chip.value(of: .name("LIGHT")) == true)
        try light.set(false)
        #expect(try light.read() == false)
        #expect(chip.value(of: .offset(0)) == false)
    }

    @Test func activeLowInvertsThePhysicalLevelButNotTheState() throws {
        let chip = Self.chip()
        let led = try chip.output(GPIOLineRequest(name: "led", line: .offset(1), activeLow: true))
        #expect(try led.read() == false)
        #expect(chip.value(of: .offset(1)) == true)
        try led.set(true)
        #expect(try led.read() == true)
        #expect(chip.value(of: .offset(1)) == false)
    }

    @Test(arguments: [(false, false, false), (true, false, true), (false, true, true), (true, true, false)])
    func theInitialValueIsDrivenOnRequest(initial: Bool, activeLow: Bool, physical: Bool) throws {
        let chip = Self.chip()
        let light = try chip.output(GPIOLineRequest(name: "light", line: .offset(0), activeLow: activeLow, initial: initial))
        #expect(try light.read() == initial)
        #expect(chip.value(of: .offset(0)) == physical)
    }

    @Test func aReleasedLineCanBeRequestedAgain() throws {
        let chip = Self.chip()
        var light: (any DigitalOutput)? = try chip.output(GPIOLineRequest(name: "light", line: .offset(0)))
        #expect(chip.info.lines[0].consumer == "light")
        #expect(light != nil)
        light = nil
        #expect(chip.info.lines[0].used == false)
        let again = try chip.output(GPIOLineRequest(name: "lamp", line: .offset(0)))
        #expect(again.name == "lamp")
    }

    @Test func infoDescribesHeldLines() throws {
        let chip = Self.chip()
        let led = try chip.output(GPIOLineRequest(name: "led", line: .name("LED"), activeLow: true))
        let button = try chip.input(GPIOLineRequest(name: "button", line: .offset(2)))
        let info = chip.info
        #expect(info.lineCount == 4)
        #expect(info.lines[1] == GPIOLineInfo(offset: 1, name: "LED", consumer: "led", direction: .output, activeLow: true, used: true))
        #expect(info.lines[2] == GPIOLineInfo(offset: 2, name: "BUTTON", consumer: "button", direction: .input, activeLow: false, used: true))
        #expect(info.lines[3] == GPIOLineInfo(offset: 3, name: nil, consumer: nil, direction: .input, activeLow: false, used: false))
        _ = (led, button)
    }

    // MARK: Inputs

    /// An active-low button on `BUTTON`, idle (pulled high) before it is requested.
    static func button(_ chip: SimulatedGPIOChip, debounce: Duration = .milliseconds(20)) throws -> any DigitalInput {
        try chip.setInput(.name("BUTTON"), physical: true)
        return try chip.input(GPIOLineRequest(name: "button", line: .name("BUTTON"), activeLow: true, debounce: debounce))
    }

    @Test func pressAndReleaseAreEvents() throws {
        let chip = Self.chip()
        let button = try Self.button(chip)
        #expect(try button.read() == false)
        let before = Date()
        try chip.setInput(.name("BUTTON"), physical: false)
        #expect(try button.read() == true)
        let press = try #require(try button.nextEvent(timeout: .seconds(5)))
        #expect(press.edge == .pressed)
        #expect(press.time >= before.addingTimeInterval(-1) && press.time <= Date())
        try chip.setInput(.offset(2), physical: true)
        #expect(try button.nextEvent(timeout: .seconds(5))?.edge == .released)
        #expect(try button.read() == false)
    }

    @Test func setInputToTheSameLevelIsNoEdge() throws {
        let chip = Self.chip()
        let button = try Self.button(chip)
        try chip.setInput(.name("BUTTON"), physical: true)
        #expect(try button.nextEvent(timeout: .milliseconds(60)) == nil)
    }

    @Test func bounceIsMergedIntoOnePress() throws {
        let chip = Self.chip()
        let button = try Self.button(chip)
        try chip.bounce(.name("BUTTON"), transitions: 7)
        #expect(try button.nextEvent(timeout: .seconds(5))?.edge == .pressed)
        #expect(try button.nextEvent(timeout: .milliseconds(80)) == nil)
        try chip.bounce(.name("BUTTON"), transitions: 5)
        #expect(try button.nextEvent(timeout: .seconds(5))?.edge == .released)
    }

    @Test func aShortGlitchIsIgnored() throws {
        let chip = Self.chip()
        let button = try Self.button(chip)
        try chip.bounce(.name("BUTTON"), transitions: 2)
        #expect(try button.nextEvent(timeout: .milliseconds(80)) == nil)
        #expect(try button.read() == false)
    }

    @Test func noEdgeWithinTheTimeoutIsNil() throws {
        let chip = Self.chip()
        let button = try Self.button(chip)
        let start = ContinuousClock.now
        #expect(try button.nextEvent(timeout: .milliseconds(50)) == nil)
        let waited = ContinuousClock.now - start
        #expect(waited >= .milliseconds(40) && waited < .seconds(10))
        #expect(try button.nextEvent(timeout: .zero) == nil)
    }

    @Test func aPressFromAnotherThreadWakesTheWaitingOne() throws {
        let chip = Self.chip()
        let button = try Self.button(chip)
        let pressed = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            Thread.sleep(forTimeInterval: 0.05)
            // The waiting thread must see this through the condition variable, not by polling.
            try? chip.bounce(.name("BUTTON"), transitions: 3)
            pressed.signal()
        }
        let start = ContinuousClock.now
        let event = try button.nextEvent(timeout: .seconds(10))
        #expect(event?.edge == .pressed)
        #expect(ContinuousClock.now - start < .seconds(9))
        pressed.wait()
    }

    // MARK: Errors

    @Test func aLineRequestedTwiceIsBusyAndNamesTheHolder() throws {
        let chip = Self.chip()
        let light = try chip.output(GPIOLineRequest(name: "light", line: .offset(0)))
        let error = caught(GPIOError.self) {
            try chip.input(GPIOLineRequest(name: "button", line: .name("LIGHT")))
        }
        #expect(error?.code == EBUSY)
        #expect(error?.message == "button: simulated line \"LIGHT\" (offset 0) is busy: used by \"light\"")
        _ = light
    }

    @Test func anOffsetOutOfRangeSaysHowManyLinesThereAre() {
        let chip = SimulatedGPIOChip(name: "gpiochip0", lines: (0..<8).map { "L\($0)" })
        let error = caught(GPIOError.self) {
            try chip.output(GPIOLineRequest(name: "light", line: .offset(17)))
        }
        #expect(error?.message == "light: gpiochip0 has 8 lines; offset 17 is out of range")
        #expect(error?.code == EINVAL)
    }

    @Test func anUnknownLineNameIsNamedWithTheNamesThatExist() {
        let chip = Self.chip()
        let error = caught(GPIOError.self) {
            try chip.output(GPIOLineRequest(name: "light", line: .name("LAMP")))
        }
        #expect(error?.message == "light: simulated has no line named \"LAMP\" (named lines: LIGHT, LED, BUTTON)")
        #expect(error?.code == ENOENT)
    }

    @Test func badRequestsAndHooksAreRefusedClearly() throws {
        let chip = Self.chip()
        let unnamed = caught(GPIOError.self) { try chip.output(GPIOLineRequest(name: "", line: .offset(0))) }
        #expect(unnamed?.message.contains("needs a name") == true)
        let negative = caught(GPIOError.self) {
            try chip.input(GPIOLineRequest(name: "button", line: .offset(2), debounce: .milliseconds(-1)))
        }
        #expect(negative?.message.contains("negative") == true)
        let light = try chip.output(GPIOLineRequest(name: "light", line: .offset(0)))
        let driven = caught(GPIOError.self) { try chip.setInput(.offset(0), physical: true) }
        #expect(driven?.message.contains("output driven by \"light\"") == true)
        #expect(throws: GPIOError.self) { try chip.bounce(.offset(9), transitions: 1) }
        #expect(throws: GPIOError.self) { try chip.bounce(.offset(2), transitions: -1) }
        #expect(chip.value(of: .name("NOPE")) == nil)
        #expect(chip.value(of: .name("")) == nil)
        _ = light
    }
}

extension GPIOSimulatedChipTests {
    @Test func anEnormousTimeoutStillReturnsTheEvent() throws {
        let chip = Self.chip()
        let button = try Self.button(chip, debounce: .zero)
        try chip.setInput(.name("BUTTON"), physical: false)
        #expect(try button.nextEvent(timeout: .seconds(Int64.max))?.edge == .pressed)
    }
}
