import Foundation
import Testing
@testable import HarkDevices
import HarkTestSupport

/// Which chip an unconfigured appliance drives, decided from a list of chips as `GPIOChips.list()` gives it.
@Suite struct GPIOHeaderChipTests {
    static func chip(_ number: Int, _ label: String, lines: Int = 54, error: String? = nil) -> GPIOChipInfo {
        GPIOChipInfo(name: "gpiochip\(number)", path: "/dev/gpiochip\(number)", label: label, lineCount: lines, lines: [], error: error)
    }

    @Test("the header's chip is found by its label, whatever its number", arguments: [
        // Pi 5 kernels before 6.6.45 numbered RP1's chip 4, after it 0: the label is what stays.
        ([chip(0, "gpio-brcmstb@107d508500", lines: 32), chip(1, "gpio-brcmstb@107d517c00", lines: 15),
          chip(4, "pinctrl-rp1"), chip(10, "raspberrypi-exp-gpio", lines: 8)], "gpiochip4"),
        ([chip(0, "pinctrl-rp1"), chip(10, "gpio-brcmstb@107d508500", lines: 32)], "gpiochip0"),
        ([chip(0, "pinctrl-bcm2711", lines: 58), chip(1, "raspberrypi-exp-gpio", lines: 8)], "gpiochip0"),
        ([chip(0, "raspberrypi-exp-gpio", lines: 8), chip(1, "pinctrl-bcm2835")], "gpiochip1"),
    ])
    func byLabel(chips: [GPIOChipInfo], expected: String) throws {
        let choice = try GPIOChips.headerChip(among: chips)
        #expect(choice.chip.name == expected)
        #expect(GPIOChips.headerLabels.contains(choice.chip.label))
        #expect(choice.description == "gpio chip: \(choice.chip.description), the 40-pin header's chip by its label")
    }

    @Test func theNewestBoardsLabelWinsWhenTwoAreThere() throws {
        let choice = try GPIOChips.headerChip(among: [Self.chip(0, "pinctrl-bcm2835"), Self.chip(3, "pinctrl-rp1")])
        #expect(choice.chip.label == "pinctrl-rp1")
    }

    @Test func withoutAHeaderLabelTheFirstChipThatOpensIsUsedAndTheChoiceSaysSo() throws {
        let chips = [Self.chip(0, "gpio-sim.0-node0", lines: 8, error: "permission denied"), Self.chip(1, "gpio-sim.1-node0", lines: 8)]
        let choice = try GPIOChips.headerChip(among: chips)
        #expect(choice.chip.name == "gpiochip1")
        #expect(choice.reason.contains("no chip labelled pinctrl-rp1, pinctrl-bcm2711, pinctrl-bcm2835"))
        #expect(choice.reason.contains("others: gpiochip0"))
        #expect(choice.reason.contains("set gpio.chip"))
    }

    @Test func whenNoChipOpensTheFirstIsChosenSoItsErrorIsTheOneReported() throws {
        let choice = try GPIOChips.headerChip(among: [Self.chip(2, "a", error: "denied"), Self.chip(5, "b", error: "denied")])
        #expect(choice.chip.name == "gpiochip2")
    }

    @Test func noChipAtAllIsAnErrorThatSaysWhatWasLookedFor() {
        let error = caught(GPIOError.self) { try GPIOChips.headerChip(among: []) }
        #expect(error?.code == ENOENT)
        #expect(error?.message.contains("pinctrl-rp1") == true)
        #expect(error?.message.contains("no GPIO chips") == true)
    }

    @Test("a chip is found by path, number, name or else label", arguments: [
        ("/dev/gpiochip3", "/dev/gpiochip3"), ("7", "/DIR/gpiochip7"), ("gpiochip2", "/DIR/gpiochip2"),
    ])
    func devicePath(spec: String, expected: String) throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hark-gpio-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        try Data().write(to: dir.appendingPathComponent("gpiochip2"))
        #expect(GPIOChips.devicePath(for: spec, directory: dir.path) == expected.replacingOccurrences(of: "/DIR", with: dir.path))
        // A label no chip carries (these files are not chips, so none has a label) resolves to nothing.
        #expect(GPIOChips.devicePath(for: "pinctrl-rp1", directory: dir.path) == nil)
    }
}
