import Foundation

/// The chip a configuration without `gpio.chip` uses, and why.
public struct GPIOChipChoice: Sendable, Equatable, CustomStringConvertible {
    public var chip: GPIOChipInfo
    /// How it was chosen: by its label, or as the fallback (naming the labels that were looked for).
    public var reason: String

    /// `gpio chip: gpiochip4 [pinctrl-rp1] (54 lines), the 40-pin header's chip by its label`.
    public var description: String { "gpio chip: \(chip.description), \(reason)" }
}

extension GPIOChips {
    /// The labels of the chip wired to a Raspberry Pi's 40-pin header, newest board first: Pi 5 (RP1), Pi 4,
    /// then Pi 1–3 and Zero. The chip's number is not stable (a Pi 5 kernel has numbered RP1's chip 0 and 4),
    /// its label is.
    public static let headerLabels = ["pinctrl-rp1", "pinctrl-bcm2711", "pinctrl-bcm2835"]

    /// The chip an unconfigured appliance drives: the 40-pin header's, found by its label (the first of
    /// `headerLabels` that some chip carries); on any other board the lowest-numbered chip that opens, as the
    /// old default `gpiochip0` did, saying that no header label was found. An error when there is no chip.
    public static func headerChip(among chips: [GPIOChipInfo]) throws(GPIOError) -> GPIOChipChoice {
        for label in headerLabels {
            if let chip = chips.first(where: { $0.label == label }) {
                return GPIOChipChoice(chip: chip, reason: "the 40-pin header's chip by its label")
            }
        }
        let looked = "no chip labelled " + headerLabels.joined(separator: ", ")
        guard let first = chips.first(where: { $0.error == nil }) ?? chips.first else {
            throw GPIOError(function: "gpiod_chip_open", code: ENOENT,
                            message: "not set, and there is no GPIO chip to default to: \(looked), and this machine has no GPIO chips (no /dev/gpiochip*); set gpio.chip or simulate")
        }
        let others = chips.filter { $0.path != first.path }.map(\.description)
        return GPIOChipChoice(chip: first, reason: "the first chip here (\(looked)" + (others.isEmpty ? "" : "; others: " + others.joined(separator: ", ")) + "; set gpio.chip to choose)")
    }
}
