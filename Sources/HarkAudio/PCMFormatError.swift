/// Audio handed to something that takes another format (a sink, the endpointer, the noise suppressor).
/// Convert first with `PCMBuffer.converted(to:)`.
public struct PCMFormatError: Error, CustomStringConvertible, Sendable, Equatable {
    public var expected: PCMFormat
    public var actual: PCMFormat
    /// Who refused the audio: a path, a device, a component.
    public var context: String

    public init(expected: PCMFormat, actual: PCMFormat, context: String) {
        self.expected = expected
        self.actual = actual
        self.context = context
    }

    public var description: String { "\(context): expected \(expected) audio, got \(actual)" }
}
