/// An output line of a `SimulatedGPIOChip`. Released (free for the next request) when dropped.
/// Its state lives in the chip, under the chip's lock, so the line is `Sendable` as it stands.
final class SimulatedGPIOLineOutput: DigitalOutput {
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

    func set(_ active: Bool) throws(GPIOError) {
        chip.setOutput(offset: offset, active: active)
    }

    func read() throws(GPIOError) -> Bool {
        chip.logicalLevel(offset: offset)
    }
}
