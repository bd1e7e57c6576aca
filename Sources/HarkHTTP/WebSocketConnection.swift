import Synchronization

/// One accepted WebSocket, as its handler sees it: send and close from any thread.
///
/// Sends are queued here and written by the service thread when the socket can take them
/// (`lws_callback_on_writable`, woken by `lws_cancel_service`); a large message goes out in fragments. After
/// the connection has closed, `send` returns false and does nothing.
public final class WebSocketConnection: Sendable {
    /// The upgrade request (path, query, headers, remote address).
    public let request: HTTPRequest

    struct Message {
        var bytes: [UInt8]
        var binary: Bool
    }

    private struct Outbox {
        var messages: [Message] = []
        var first = 0
        var queuedBytes = 0
        var closeRequest: (code: UInt16, reason: String)?
        /// The client stopped reading: nothing queued will be sent, and the service thread closes at once rather
        /// than after the queue has drained (which, with the socket buffers full, would be never).
        var abandoned = false
        var closed = false

        /// Forgets every message not yet written.
        mutating func dropQueued() {
            messages = []
            first = 0
            queuedBytes = 0
        }
    }

    let serial: UInt64
    private let wakeup: LWSWakeup
    private let backlogLimit: Int
    private let outbox = Mutex(Outbox())
    /// Bytes received and handed to the handler's queue but not yet processed, and whether reading is paused.
    private let inbound = Mutex<(bytes: Int, paused: Bool)>((0, false))
    /// Past this many unprocessed bytes the service thread stops reading from the client (TCP then pushes
    /// back on the sender); reading resumes once the handler is down to half.
    static let inboundHighWater = 256 * 1024

    init(serial: UInt64, request: HTTPRequest, wakeup: LWSWakeup, backlogLimit: Int) {
        self.serial = serial
        self.request = request
        self.wakeup = wakeup
        self.backlogLimit = backlogLimit
    }

    /// Queues a text message. Returns false when the connection is closed or closing, or when the client has
    /// not read `maxWebSocketBacklogBytes` of earlier messages: the connection is then closed with 1008 at once,
    /// and what was still queued for it is dropped.
    @discardableResult
    public func send(text: String) -> Bool { enqueue(Message(bytes: Array(text.utf8), binary: false)) }

    /// Queues a binary message; see `send(text:)`.
    @discardableResult
    public func send(binary: [UInt8]) -> Bool { enqueue(Message(bytes: binary, binary: true)) }

    /// Closes after the messages already queued are sent (`lws_close_reason`). Code 1000 is a normal close;
    /// the reason is cut to the 123 bytes a close frame can carry.
    public func close(code: UInt16 = 1000, reason: String = "") {
        let changed = outbox.withLock { box in
            guard !box.closed, box.closeRequest == nil else { return false }
            box.closeRequest = (code, reason)
            return true
        }
        if changed { wakeup.requestWrite(serial) }
    }

    /// False once the connection has closed or a close was asked for.
    public var isOpen: Bool { outbox.withLock { !$0.closed && $0.closeRequest == nil } }

    /// Bytes queued for the client and not yet written: a real-time sender (the rooms' mixer) skips a frame
    /// rather than queue behind a client that is not keeping up.
    public var queuedBytes: Int { outbox.withLock { $0.queuedBytes } }

    private func enqueue(_ message: Message) -> Bool {
        enum Outcome { case queued, refused, overflow }
        let outcome: Outcome = outbox.withLock { box in
            guard !box.closed, box.closeRequest == nil else { return .refused }
            if box.queuedBytes + message.bytes.count > backlogLimit {
                box.closeRequest = (1008, "the client is not reading its messages")
                box.abandoned = true
                box.dropQueued()
                return .overflow
            }
            box.messages.append(message)
            box.queuedBytes += message.bytes.count
            return .queued
        }
        if outcome != .refused { wakeup.requestWrite(serial) }
        return outcome == .queued
    }

    // MARK: Service thread

    /// The next message to write, if any.
    func takeMessage() -> Message? {
        outbox.withLock { box in
            guard box.first < box.messages.count else { return nil }
            let message = box.messages[box.first]
            box.messages[box.first] = Message(bytes: [], binary: false)
            box.first += 1
            box.queuedBytes -= message.bytes.count
            if box.first > 64 && box.first * 2 > box.messages.count {
                box.messages.removeFirst(box.first)
                box.first = 0
            }
            return message
        }
    }

    /// Whether messages are waiting, and the close asked for once they are written.
    func pendingState() -> (hasMessages: Bool, closeRequest: (code: UInt16, reason: String)?) {
        outbox.withLock { (hasMessages: $0.first < $0.messages.count, closeRequest: $0.closeRequest) }
    }

    /// The close to make now, without waiting for the socket to become writable: set once the client stopped
    /// reading (`abandoned`), nil otherwise.
    var abandonment: (code: UInt16, reason: String)? { outbox.withLock { $0.abandoned ? $0.closeRequest : nil } }

    /// Service thread: `count` more bytes are on their way to the handler. True when reading should pause.
    func inboundQueued(_ count: Int) -> Bool {
        inbound.withLock { state in
            state.bytes += count
            if state.bytes > Self.inboundHighWater && !state.paused {
                state.paused = true
                return true
            }
            return false
        }
    }

    /// Handler queue: `count` bytes were processed; asks the service thread to read again once below half.
    func inboundProcessed(_ count: Int) {
        let resume = inbound.withLock { state -> Bool in
            state.bytes -= count
            guard state.paused, state.bytes <= Self.inboundHighWater / 2 else { return false }
            state.paused = false
            return true
        }
        if resume { wakeup.requestResume(serial) }
    }

    /// The connection is gone: drop what is queued and refuse further sends.
    func markClosed() {
        outbox.withLock { box in
            box.closed = true
            box.dropQueued()
        }
    }
}
