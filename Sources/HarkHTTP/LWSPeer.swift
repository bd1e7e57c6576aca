import Dispatch

/// What the service thread knows about one accepted network connection for the connection limits.
struct LWSPeer {
    /// The client's address group (`AddressGroup`): limits count per group.
    var group: String
    /// Since when it has had no request in progress (accepted and silent, or kept alive between requests);
    /// nil while a request or WebSocket is using it. The longest-idle connection is pushed out first.
    var idleSince: DispatchTime?
    /// HTTP/2 streams (requests, WebSockets) in progress on it: the connection is idle when there are none.
    var streams: Set<OpaquePointer> = []
    /// Already told to close (pushed out); no longer counted.
    var evicted = false
}
