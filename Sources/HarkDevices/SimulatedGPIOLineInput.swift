/// An input line of a `SimulatedGPIOChip`: edges come from the chip's test hooks through a `Debouncer`.
/// Released (free for the next request) when dropped. Its state lives in the chip, under the chip's lock,
/// so the line is `Sendable` as it stands.
final class SimulatedGPIOLineInput: DigitalInput {
    let name: String
    private let chip: SimulatedGPIOChip
    private let offset: Int
    private let id: UInt64

    init(chip: SimulatedGPIOChip, name: String, offset: Int, id: UInt64) {
        self.chip = chip
        self.name = name
        self.offset = offset
        self.id = id
    }

    deinit { chip.release(offset: offset, id: id) }

    func read() throws(GPIOError) -> Bool {
        chip.logicalLevel(offset: offset)
    }

    func nextEvent(timeout: Duration) throws(GPIOError) -> ButtonEvent? {
        chip.nextEvent(offset: offset, timeout: timeout)
    }
}
