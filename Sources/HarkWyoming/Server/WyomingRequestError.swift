/// A request the client got wrong, or a service that failed: sent as an `error` event; the connection
/// carries on.
struct WyomingRequestError: Error {
    var text: String
    var code: String
}

/// The client is gone (a write failed): the connection ends.
public struct WyomingClientGone: Error, Sendable {
    public var reason: String
}
