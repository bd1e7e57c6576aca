/// A failure to start serving or to make a certificate: the C function (or the checked setting) that failed,
/// its code (errno, OpenSSL's packed error, or 0) and a message that says what to fix.
public struct ServerError: Error, Sendable, CustomStringConvertible {
    /// The failing C function (`lws_create_vhost`, `X509_sign`, ...) or the configuration field checked.
    public var function: String
    public var code: Int32
    public var message: String

    public init(function: String, code: Int32, message: String) {
        self.function = function
        self.code = code
        self.message = message
    }

    public var description: String { "\(function): \(message)" }
}
