import Foundation

// Temporary until the system-entity branch lands: recognises nothing.
public struct SystemEntityExtractor: Sendable {
    public static let supported: Set<String> = ["sys-number", "sys-percentage", "sys-date", "sys-time"]
    public init(enabled: Set<String>) {}
    public func extract(from text: String, now: Date, timeZone: TimeZone) -> [EntityMatch] { [] }
}
