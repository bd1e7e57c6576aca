/// A problem with the auth files (`auth-secret`, `users.json`, `pairing.json`) or with what was asked to be
/// stored in them (a user name or password that is not allowed). Names the file or the argument.
public struct AuthStoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file's path, or what was wrong ("password", "user name"); nil if neither applies.
    public var subject: String?
    /// What is wrong, and where it helps, what to do about it.
    public var message: String

    public init(subject: String?, message: String) {
        self.subject = subject
        self.message = message
    }

    public var description: String { subject.map { "\($0): \(message)" } ?? message }
}
