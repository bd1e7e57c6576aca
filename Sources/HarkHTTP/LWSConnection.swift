import Dispatch

/// What the service thread knows about one lws connection (`struct lws *`): the HTTP exchange in progress, or
/// the WebSocket it became. Touched only on the service thread.
final class LWSConnection {
    let wsi: OpaquePointer
    /// The current HTTP request's number, or the WebSocket's: responses and write requests from other threads
    /// name it, so one that arrives after the connection moved on is dropped instead of misdelivered.
    var serial: UInt64 = 0

    // HTTP
    var request: HTTPRequest?
    var expectedBodyBytes = 0
    var body: [UInt8] = []
    var response: HTTPResponse?
    var headOnly = false
    var closeAfterResponse = false
    var headWritten = false
    var bodyOffset = 0

    // WebSocket
    var handler: (any WebSocketHandler)?
    /// An HTTP/2 WebSocket the router refused: it is closed as soon as it opens.
    var refusal: HTTPResponse?
    var socket: WebSocketConnection?
    var queue: DispatchQueue?
    var incoming: [UInt8] = []
    var incomingIsBinary = false
    var outgoing: WebSocketConnection.Message?
    var outgoingOffset = 0
    var closedReported = false
    /// The current request has gone to the router: it must go once only (see `LWSServer.dispatch`).
    var dispatched = false

    init(wsi: OpaquePointer) {
        self.wsi = wsi
    }

    /// Forgets the previous request on a kept-alive connection.
    func beginRequest(serial: UInt64) {
        self.serial = serial
        request = nil
        expectedBodyBytes = 0
        body = []
        response = nil
        headOnly = false
        closeAfterResponse = false
        headWritten = false
        bodyOffset = 0
        dispatched = false
    }
}
