import CLWS
import CWebsockets
import Dispatch
import Foundation
import HarkCore

/// The libwebsockets engine under `HTTPServer`: one context and vhost (`clws_server_create`), one callback
/// for every HTTP and WebSocket event, and the bookkeeping that lets handlers run on other threads.
///
/// `@unchecked Sendable`: the connection tables and stop state are touched only on the service thread (the
/// one running `serve()`, or the caller of `destroyUnstarted()` when the server never started); other threads
/// reach it only through `wakeup` (a `Mutex`) and the immutable configuration, router and port.
final class LWSServer: @unchecked Sendable {
    let configuration: ServerConfiguration
    let router: Router
    let wakeup = LWSWakeup()
    private(set) var port = 0

    /// `clws_server *`; nil once destroyed.
    private var server: OpaquePointer?
    private var connections: [OpaquePointer: LWSConnection] = [:]
    private var bySerial: [UInt64: LWSConnection] = [:]
    /// Accepted network connections (HTTP/2 streams are not counted: they share one).
    private var network: [OpaquePointer: LWSPeer] = [:]
    /// Accepted WebSockets (HTTP/2 streams included) and their client's address group.
    private var webSockets: [OpaquePointer: String] = [:]
    private var nextSerial: UInt64 = 1
    private var stopDeadline: DispatchTime?

    private static let chunkBytes = 32 * 1024

    private static let logLevel: Void = {
        // Errors only: lws' notices and warnings (a client sending garbage, a timed-out slow client) are routine.
        lws_set_log_level(Int32(LLL_ERR), nil)
    }()

    init(configuration: ServerConfiguration, router: Router) throws(ServerError) {
        try configuration.validate()
        self.configuration = configuration
        self.router = router
        Self.logLevel

        var error = [CChar](repeating: 0, count: 256)
        let created: OpaquePointer? = withOptionalCString(configuration.host) { host in
            withOptionalCString(configuration.tls?.certificate.path) { certificate in
                withOptionalCString(configuration.tls?.privateKey.path) { key in
                    let alpn = configuration.tls?.http2 == false ? "http/1.1" : "h2,http/1.1"
                    return alpn.withCString { alpn in
                        var options = clws_server_options()
                        options.interface = host
                        options.port = Int32(configuration.port)
                        options.certificate_path = certificate
                        options.private_key_path = key
                        options.alpn = alpn
                        options.header_buffer_bytes = UInt32(min(65535, configuration.maxHeaderBytes * 2))
                        options.header_buffer_count = UInt32(min(1024, configuration.maxConnections + 8))
                        options.timeout_seconds = UInt32(configuration.requestTimeoutSeconds)
                        options.keepalive_seconds = Int32(configuration.keepAliveSeconds)
                        options.receive_buffer_bytes = 64 * 1024
                        // Room for every allowed client plus the ones answered 503, the listeners and lws' pipe.
                        options.file_descriptor_limit = UInt32(configuration.maxConnections * 2 + 16)
                        options.ping_seconds = UInt16(configuration.webSocketPingSeconds)
                        options.hangup_seconds = UInt16(configuration.webSocketHangupSeconds)
                        options.user = Unmanaged.passUnretained(self).toOpaque()
                        return clws_server_create(&options, lwsCallback, &error, error.count)
                    }
                }
            }
        }
        guard let created else {
            let message = String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw ServerError(function: "clws_server_create", code: 0,
                              message: "cannot listen on \(configuration.host ?? "*"):\(configuration.port): \(message)")
        }
        server = created
        port = Int(clws_server_port(created))
        if let context = clws_server_context(created) { wakeup.attach(context) }
    }

    /// Runs the service loop until a stop request has been served, then destroys the context (closing every
    /// connection). Call on the thread that is to be the service thread.
    func serve() {
        guard let server, let context = clws_server_context(server) else { return }
        while true {
            if lws_service(context, 0) < 0 { break }
            if let deadline = stopDeadline {
                let busy = !bySerial.isEmpty
                if !busy || DispatchTime.now() >= deadline { break }
            }
        }
        destroy()
    }

    /// `clws_server_log_context_is_own` while the server exists (nil after): tests check that no two servers
    /// share lws' global log context, whose unlocked count aborts the process when they race on it.
    var logContextIsOwn: Int32? { server.map { clws_server_log_context_is_own($0) } }

    /// Destroys a context that was never served (the caller's thread acts as the service thread).
    func destroyUnstarted() {
        destroy()
    }

    private func destroy() {
        guard let server else { return }
        wakeup.detach()
        // lws_context_destroy closes the remaining connections: their CLOSED callbacks still arrive here.
        clws_server_destroy(server)
        self.server = nil
        connections = [:]
        bySerial = [:]
        network = [:]
        webSockets = [:]
    }

    // MARK: The callback

    fileprivate func handle(_ wsi: OpaquePointer, _ reason: lws_callback_reasons, _ input: UnsafeMutableRawPointer?,
                            _ length: Int) -> Int32 {
        switch reason {
        case LWS_CALLBACK_WSI_CREATE:
            // A new wsi may reuse a freed one's address: never let it inherit that one's state (an accepted
            // WebSocket handler, say).
            connections[wsi] = nil
        case LWS_CALLBACK_SERVER_NEW_CLIENT_INSTANTIATED:
            connections[wsi] = nil
            admit(wsi)
        case LWS_CALLBACK_WSI_DESTROY:
            streamGone(wsi)
            network[wsi] = nil
            webSockets[wsi] = nil
            forget(wsi)
        case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
            collectWakeups()
        case LWS_CALLBACK_HTTP:
            return httpRequest(wsi)
        case LWS_CALLBACK_HTTP_BODY:
            return httpBody(wsi, input, length)
        case LWS_CALLBACK_HTTP_BODY_COMPLETION:
            return httpBodyComplete(wsi)
        case LWS_CALLBACK_HTTP_WRITEABLE:
            return httpWriteable(wsi)
        case LWS_CALLBACK_CLOSED_HTTP:
            forget(wsi)
        case LWS_CALLBACK_HTTP_CONFIRM_UPGRADE:
            return confirmUpgrade(wsi, input)
        case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION:
            return filterWebSocket(wsi)
        case LWS_CALLBACK_ESTABLISHED:
            return established(wsi)
        case LWS_CALLBACK_RECEIVE:
            return receive(wsi, input, length)
        case LWS_CALLBACK_SERVER_WRITEABLE:
            return webSocketWriteable(wsi)
        case LWS_CALLBACK_CLOSED:
            forget(wsi)
        default:
            break
        }
        return 0
    }

    private func newSerial() -> UInt64 {
        defer { nextSerial += 1 }
        return nextSerial
    }

    private func connection(_ wsi: OpaquePointer) -> LWSConnection {
        if let existing = connections[wsi] { return existing }
        let created = LWSConnection(wsi: wsi)
        connections[wsi] = created
        return created
    }

    // MARK: Connection limits

    /// A new network connection: counted under its address group; past the per-address or total limit the
    /// longest-idle connection (of that group, or of the largest group) is pushed out to make room.
    private func admit(_ wsi: OpaquePointer) {
        var address = [CChar](repeating: 0, count: 64)
        clws_peer_address(wsi, &address, address.count)
        let group = AddressGroup.of(Self.plainAddress(String(decoding: address.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)))
        network[wsi] = LWSPeer(group: group, idleSince: .now())
        let live = network.values.filter { !$0.evicted }
        if live.filter({ $0.group == group }).count > configuration.maxConnectionsPerAddress {
            evictIdle(in: group, except: wsi)
        } else if live.count > configuration.maxConnections {
            var sizes: [String: Int] = [:]
            for peer in live { sizes[peer.group, default: 0] += 1 }
            // The largest group first: one client hoarding connections makes way before everyone else.
            for (candidate, _) in sizes.sorted(by: { $0.value > $1.value }) where evictIdle(in: candidate, except: wsi) { return }
        }
    }

    /// Pushes out the connection of `group` that has been idle longest; false when none is idle.
    @discardableResult
    private func evictIdle(in group: String, except newcomer: OpaquePointer) -> Bool {
        let victim = network.filter { $0.key != newcomer && $0.value.group == group && $0.value.idleSince != nil && !$0.value.evicted }
            .min { $0.value.idleSince! < $1.value.idleSince! }
        guard let victim else { return false }
        network[victim.key]?.evicted = true
        clws_kill(victim.key)
        return true
    }

    /// A request head arrived on `wsi` (a connection, or an HTTP/2 stream of one): it is busy, not idle.
    private func markBusy(_ wsi: OpaquePointer) {
        let networkWSI = lws_get_network_wsi(wsi) ?? wsi
        network[networkWSI]?.idleSince = nil
        if networkWSI != wsi { network[networkWSI]?.streams.insert(wsi) }
    }

    /// The response on `wsi` is complete: an HTTP/1.1 connection is now idle until its next request, an
    /// HTTP/2 one once its last stream is done.
    private func markIdle(_ wsi: OpaquePointer) {
        guard let networkWSI = lws_get_network_wsi(wsi), networkWSI != wsi else {
            network[wsi]?.idleSince = .now()
            return
        }
        endStream(wsi, of: networkWSI)
    }

    /// An HTTP/2 stream (a request or a WebSocket) finished or closed.
    private func endStream(_ stream: OpaquePointer, of networkWSI: OpaquePointer) {
        guard var peer = network[networkWSI], peer.streams.remove(stream) != nil else { return }
        if peer.streams.isEmpty { peer.idleSince = .now() }
        network[networkWSI] = peer
    }

    /// `wsi` is going away: if it was an HTTP/2 stream, its connection may now be idle.
    private func streamGone(_ wsi: OpaquePointer) {
        if let networkWSI = lws_get_network_wsi(wsi), networkWSI != wsi { endStream(wsi, of: networkWSI) }
    }

    private func group(of wsi: OpaquePointer) -> String? {
        network[lws_get_network_wsi(wsi) ?? wsi]?.group
    }

    /// 503 when a WebSocket would take a connection kept for plain requests, or exceed its address's share.
    private func webSocketRefusal(_ wsi: OpaquePointer) -> HTTPResponse? {
        let webSocketLimit = configuration.maxConnections - configuration.reservedConnections
        if webSockets.count >= webSocketLimit {
            return .error(503, code: "unavailable",
                          message: "too many WebSockets (at most \(webSocketLimit); the rest are kept for the page); try again shortly")
                .adding(header: "retry-after", value: "5")
        }
        if let group = group(of: wsi), webSockets.values.filter({ $0 == group }).count >= configuration.maxWebSocketsPerAddress {
            return .error(503, code: "unavailable",
                          message: "too many WebSockets from this address (at most \(configuration.maxWebSocketsPerAddress)); close some first")
                .adding(header: "retry-after", value: "5")
        }
        return nil
    }

    private static func plainAddress(_ address: String) -> String {
        address.hasPrefix("::ffff:") && address.contains(".") ? String(address.dropFirst("::ffff:".count)) : address
    }

    /// The connection is closing: report a WebSocket's end to its handler and drop the bookkeeping.
    private func forget(_ wsi: OpaquePointer) {
        webSockets[wsi] = nil
        guard let connection = connections.removeValue(forKey: wsi) else { return }
        if bySerial[connection.serial] === connection { bySerial[connection.serial] = nil }
        if let socket = connection.socket, let handler = connection.handler, !connection.closedReported {
            connection.closedReported = true
            socket.markClosed()
            connection.queue?.async { handler.closed() }
        }
    }

    private func collectWakeups() {
        let pending = wakeup.take()
        for (serial, response) in pending.responses {
            guard let connection = bySerial[serial], connection.serial == serial, connection.response == nil else {
                continue
            }
            connection.response = response
            lws_set_timeout(connection.wsi, PENDING_TIMEOUT_HTTP_CONTENT, Int32(configuration.requestTimeoutSeconds))
            lws_callback_on_writable(connection.wsi)
        }
        for serial in pending.writable {
            guard let connection = bySerial[serial], let socket = connection.socket else { continue }
            if let close = socket.abandonment {
                // The client has not read its backlog, so its socket may never become writable again: close
                // now. lws tries the close frame and drops the connection if it cannot be written.
                Self.setCloseReason(connection.wsi, code: lws_close_status(UInt32(close.code)), reason: close.reason)
                lws_set_timeout(connection.wsi, PENDING_TIMEOUT_CLOSE_SEND, LWS_TO_KILL_ASYNC)
                continue
            }
            lws_callback_on_writable(connection.wsi)
        }
        for serial in pending.resume {
            guard let connection = bySerial[serial], connection.socket != nil else { continue }
            lws_rx_flow_control(connection.wsi, 1)
        }
        if pending.stop && stopDeadline == nil {
            // Give WebSockets a proper close (1001 going away) and in-flight requests their answer, briefly.
            stopDeadline = .now() + .seconds(2)
            for connection in connections.values {
                if let socket = connection.socket {
                    socket.close(code: 1001, reason: "the server is stopping")
                    lws_callback_on_writable(connection.wsi)
                }
            }
        }
    }

    // MARK: HTTP

    private func httpRequest(_ wsi: OpaquePointer) -> Int32 {
        guard let head = LWSRequestHead(wsi: wsi) else { return -1 }
        markBusy(wsi)
        let connection = connection(wsi)
        connection.beginRequest(serial: newSerial())
        connection.request = head.request
        connection.headOnly = head.request.method == "HEAD"
        bySerial[connection.serial] = connection

        if let refusal = limitRefusal(head, wsi: wsi) {
            return answer(connection, refusal, close: true)
        }
        if head.hasTransferEncoding {
            return answer(connection, .error(411, code: "length_required",
                                             message: "chunked request bodies are not supported: send a Content-Length"),
                          close: true)
        }
        guard let lengthText = head.contentLength else {
            if ["POST", "PUT", "PATCH"].contains(head.request.method) {
                return answer(connection, .error(411, code: "length_required",
                                                 message: "\(head.request.method) needs a Content-Length header"),
                              close: true)
            }
            dispatch(connection)
            return 0
        }
        guard let length = Int(lengthText.trimmingWhitespace()), length >= 0 else {
            return answer(connection, .error(400, code: "bad_request",
                                             message: "Content-Length \"\(lengthText)\" is not a byte count"),
                          close: true)
        }
        if length > configuration.maxBodyBytes {
            return answer(connection, .error(413, code: "payload_too_large",
                                             message: "the body is \(length) bytes; at most \(configuration.maxBodyBytes) are accepted"),
                          close: true)
        }
        if length == 0 {
            dispatch(connection)
            return 0
        }
        connection.expectedBodyBytes = length
        connection.body.reserveCapacity(length)
        lws_set_timeout(wsi, PENDING_TIMEOUT_HTTP_CONTENT, Int32(configuration.requestTimeoutSeconds))
        return 0
    }

    /// 503 past the connection limits, 431 past the header limit: checked before anything else.
    private func limitRefusal(_ head: LWSRequestHead, wsi: OpaquePointer) -> HTTPResponse? {
        let live = network.values.filter { !$0.evicted }
        if live.count > configuration.maxConnections {
            return .error(503, code: "unavailable",
                          message: "too many connections (at most \(configuration.maxConnections)); try again shortly")
                .adding(header: "retry-after", value: "1")
        }
        if let group = group(of: wsi), live.filter({ $0.group == group }).count > configuration.maxConnectionsPerAddress {
            return .error(503, code: "unavailable",
                          message: "too many connections from this address (at most \(configuration.maxConnectionsPerAddress)); try again shortly")
                .adding(header: "retry-after", value: "1")
        }
        if head.headerBytes > configuration.maxHeaderBytes {
            return .error(431, code: "headers_too_large",
                          message: "the request head is \(head.headerBytes) bytes; at most \(configuration.maxHeaderBytes) are accepted")
        }
        return nil
    }

    private func httpBody(_ wsi: OpaquePointer, _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
        guard let connection = connections[wsi], connection.response == nil, let input, length > 0 else { return 0 }
        if connection.body.count + length > connection.expectedBodyBytes {
            return answer(connection, .error(400, code: "bad_request", message: "the body is longer than its Content-Length"),
                          close: true)
        }
        connection.body.append(contentsOf: UnsafeRawBufferPointer(start: input, count: length))
        // Each piece restarts the clock: a client trickling its body is cut off only when it stalls.
        lws_set_timeout(wsi, PENDING_TIMEOUT_HTTP_CONTENT, Int32(configuration.requestTimeoutSeconds))
        return 0
    }

    private func httpBodyComplete(_ wsi: OpaquePointer) -> Int32 {
        guard let connection = connections[wsi], connection.response == nil, connection.request != nil else { return 0 }
        connection.request?.body = connection.body
        connection.body = []
        dispatch(connection)
        return 0
    }

    /// Runs the router on the handler queue; the response comes back through `wakeup`.
    /// A request goes to the router once: lws still reports `HTTP_BODY_COMPLETION` for a request with
    /// `Content-Length: 0`, which was dispatched at its head, and a second run (a room left twice, a token
    /// revoked twice) would race the first for the answer.
    private func dispatch(_ connection: LWSConnection) {
        guard let request = connection.request, !connection.dispatched else { return }
        connection.dispatched = true
        let serial = connection.serial
        lws_set_timeout(connection.wsi, PENDING_TIMEOUT_HTTP_CONTENT, Int32(configuration.handlerTimeoutSeconds))
        // A serial queue of its own per request: libdispatch serves those from its overcommit pool, which grows
        // when handlers block. A shared concurrent queue draws on the non-overcommit pool (one thread per core),
        // where two blocked handlers — or two busy Swift concurrency threads — delay every other request ~1 s.
        DispatchQueue(label: "hark.http.request").async { [router, wakeup] in
            wakeup.post(router.respond(to: request), to: serial)
        }
    }

    /// Answers from the service thread (limits, malformed requests).
    private func answer(_ connection: LWSConnection, _ response: HTTPResponse, close: Bool) -> Int32 {
        connection.response = response
        connection.closeAfterResponse = close
        lws_set_timeout(connection.wsi, PENDING_TIMEOUT_HTTP_CONTENT, Int32(configuration.requestTimeoutSeconds))
        lws_callback_on_writable(connection.wsi)
        return 0
    }

    private func httpWriteable(_ wsi: OpaquePointer) -> Int32 {
        guard let connection = connections[wsi], let response = connection.response else { return 0 }
        if !connection.headWritten {
            guard writeHead(wsi, response, close: connection.closeAfterResponse) else { return -1 }
            connection.headWritten = true
            // HTTP/1.1 with nothing after the head (HEAD, an empty body) ends here. An empty final write in a
            // later callback let the client's next request on the connection arrive first, which
            // libwebsockets 4.3 (Debian 13) drops ("lws_read_h1: Unhandled state"; docs/debian13.md).
            if clws_is_http2(wsi) == 0 && (connection.headOnly || response.body.isEmpty) {
                return responseFinished(wsi)
            }
            lws_callback_on_writable(wsi)
            return 0
        }
        // One lws_write per writeable callback; the last one is LWS_WRITE_HTTP_FINAL (HTTP/2 ends the stream).
        // HTTP/2 DATA frames may not exceed the peer's frame size, 16 KiB unless it says more; lws does not split.
        let chunk = clws_is_http2(wsi) != 0 ? 16 * 1024 : Self.chunkBytes
        var count = connection.headOnly ? 0 : min(response.body.count - connection.bodyOffset, chunk)
        let allowance = clws_write_allowance(wsi)
        if allowance >= 0 && count > allowance {
            if allowance == 0 {
                lws_callback_on_writable(wsi)
                return 0
            }
            count = Int(allowance)
        }
        let final = connection.headOnly || connection.bodyOffset + count == response.body.count
        let failed = response.body.withUnsafeBufferPointer { body in
            clws_write_http_body(wsi, body.baseAddress.map { $0 + connection.bodyOffset }, count, final ? 1 : 0) != 0
        }
        if failed { return -1 }
        connection.bodyOffset += count
        lws_set_timeout(wsi, PENDING_TIMEOUT_HTTP_CONTENT, Int32(configuration.requestTimeoutSeconds))
        if !final {
            lws_callback_on_writable(wsi)
            return 0
        }
        return responseFinished(wsi)
    }

    /// The response is all written: close, or make the connection ready for its next request.
    private func responseFinished(_ wsi: OpaquePointer) -> Int32 {
        guard let connection = connections[wsi] else { return -1 }
        bySerial[connection.serial] = nil
        connection.response = nil
        if connection.closeAfterResponse { return -1 }
        markIdle(wsi)
        lws_set_timeout(wsi, NO_PENDING_TIMEOUT, 0)
        return lws_http_transaction_completed(wsi) != 0 ? -1 : 0
    }

    private func writeHead(_ wsi: OpaquePointer, _ response: HTTPResponse, close: Bool) -> Bool {
        // A value carrying CR or LF (from user input, say) would let it add headers of its own: strip them, and
        // drop names that are not plain tokens.
        let headers = response.headers.merging(configuration.securityHeaders) { own, _ in own }
        var fields = headers
            .filter { $0.key != "content-length" && $0.key != "connection" && Self.isHeaderName($0.key) }
            .map { (name: $0.key, value: Self.headerValue($0.value)) }
            .sorted { $0.name < $1.name }
        if close && clws_is_http2(wsi) == 0 { fields.append((name: "connection", value: "close")) }
        let names = fields.map { strdup($0.name) }
        let values = fields.map { strdup($0.value) }
        defer {
            names.forEach { free($0) }
            values.forEach { free($0) }
        }
        let written = names.map { UnsafePointer($0) }.withUnsafeBufferPointer { names in
            values.map { UnsafePointer($0) }.withUnsafeBufferPointer { values in
                clws_write_http_head(wsi, UInt32(response.status), names.baseAddress, values.baseAddress,
                                     Int32(fields.count), Int64(response.body.count))
            }
        }
        return written == 0
    }

    /// A header name that is a plain token: printable ASCII, no space, no colon.
    static func isHeaderName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.allSatisfy { $0 > 32 && $0 < 127 && $0 != UInt8(ascii: ":") }
    }

    /// `value` without control characters (Unicode's Cc and Cf, as `CharacterSet.controlCharacters`), tabs
    /// kept. Almost every value is printable ASCII and comes back as it is: that check is a byte scan, where
    /// `CharacterSet.contains` per scalar was a visible share of a `/message` turn under load.
    static func headerValue(_ value: String) -> String {
        if value.utf8.allSatisfy({ ($0 >= 32 && $0 < 127) || $0 == 9 }) { return value }
        let controls = CharacterSet.controlCharacters
        return String(value.unicodeScalars.filter { !controls.contains($0) || $0 == "\t" })
    }

    // MARK: WebSocket

    private func confirmUpgrade(_ wsi: OpaquePointer, _ input: UnsafeMutableRawPointer?) -> Int32 {
        let kind = input.map { String(cString: $0.assumingMemoryBound(to: CChar.self)) } ?? ""
        guard let head = LWSRequestHead(wsi: wsi) else { return -1 }
        markBusy(wsi)
        let connection = connection(wsi)
        let decision: WebSocketUpgrade
        if kind.lowercased() != "websocket" {
            // lws offers no way to ignore an Upgrade and answer in HTTP/1.1, and its h2c (HTTP/2 without TLS)
            // upgrade stalls our asynchronous responses: say so rather than hang. Browsers never ask for h2c.
            decision = .refuse(.error(400, code: "bad_request",
                                      message: "Upgrade: \(kind) is not supported; use HTTP/1.1, or HTTPS for HTTP/2"))
        } else if let refusal = limitRefusal(head, wsi: wsi) ?? webSocketRefusal(wsi) {
            decision = .refuse(refusal)
        } else {
            decision = router.upgrade(head.request)
        }
        switch decision {
        case .accept(let handler):
            connection.request = head.request
            connection.handler = handler
            webSockets[wsi] = group(of: wsi) ?? ""
            return 0
        case .refuse(let response):
            // The upgrade cannot wait for a writeable callback: answer now and hang up (lws: return > 0).
            guard writeHead(wsi, response, close: true) else { return -1 }
            let failed = response.body.withUnsafeBufferPointer { body in
                clws_write_http_body(wsi, body.baseAddress, body.count, 1) != 0
            }
            return failed ? -1 : 1
        }
    }

    /// A WebSocket over HTTP/2 (RFC 8441, which lws offers and Chromium uses) skips CONFIRM_UPGRADE: the router
    /// decides here instead. The 200 goes out before any response of ours could, so a refusal is carried by the
    /// close that follows (see `established`). Over HTTP/1.1 the decision was made already.
    private func filterWebSocket(_ wsi: OpaquePointer) -> Int32 {
        if let known = connections[wsi], known.handler != nil || known.refusal != nil { return 0 }
        guard let head = LWSRequestHead(wsi: wsi) else { return -1 }
        markBusy(wsi)
        let connection = connection(wsi)
        connection.request = head.request
        switch (limitRefusal(head, wsi: wsi) ?? webSocketRefusal(wsi)).map(WebSocketUpgrade.refuse) ?? router.upgrade(head.request) {
        case .accept(let handler):
            connection.handler = handler
            webSockets[wsi] = group(of: wsi) ?? ""
        case .refuse(let response): connection.refusal = response
        }
        return 0
    }

    private func established(_ wsi: OpaquePointer) -> Int32 {
        if let refusal = connections[wsi]?.refusal {
            // Close code 4000 + the HTTP status (4401, 4404, ...), the error message as the reason: a browser's
            // onclose sees both, where a refused HTTP/1.1 upgrade shows it only code 1006.
            let message = HTTPResponse.errorMessage(in: refusal) ?? "refused"
            return closeNow(wsi, code: lws_close_status(UInt32(4000 + min(max(refusal.status, 0), 999))), reason: message)
        }
        guard let connection = connections[wsi], let handler = connection.handler, let request = connection.request
        else { return -1 }
        connection.serial = newSerial()
        let socket = WebSocketConnection(serial: connection.serial, request: request, wakeup: wakeup,
                                         backlogLimit: configuration.maxWebSocketBacklogBytes)
        // Serial, so the handler sees its events in order; untargeted, so it runs on the overcommit pool (see dispatch).
        let queue = DispatchQueue(label: "hark.websocket.\(connection.serial)")
        connection.socket = socket
        connection.queue = queue
        bySerial[connection.serial] = connection
        lws_set_timeout(wsi, NO_PENDING_TIMEOUT, 0)
        queue.async { handler.opened(socket) }
        return 0
    }

    private func receive(_ wsi: OpaquePointer, _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
        guard let connection = connections[wsi], let handler = connection.handler, let queue = connection.queue,
              let socket = connection.socket
        else { return -1 }
        if connection.incoming.isEmpty { connection.incomingIsBinary = lws_frame_is_binary(wsi) != 0 }
        if connection.incoming.count + length > configuration.maxWebSocketMessageBytes {
            return closeNow(wsi, code: LWS_CLOSE_STATUS_MESSAGE_TOO_LARGE,
                            reason: "messages are limited to \(configuration.maxWebSocketMessageBytes) bytes")
        }
        if let input, length > 0 {
            connection.incoming.append(contentsOf: UnsafeRawBufferPointer(start: input, count: length))
        }
        guard lws_is_final_fragment(wsi) != 0 && lws_remaining_packet_payload(wsi) == 0 else { return 0 }
        let message = connection.incoming
        connection.incoming = []
        let count = message.count
        if connection.incomingIsBinary {
            queue.async {
                handler.received(binary: message)
                socket.inboundProcessed(count)
            }
        } else {
            guard let text = String(validating: message, as: UTF8.self) else {
                return closeNow(wsi, code: LWS_CLOSE_STATUS_INVALID_PAYLOAD, reason: "a text message was not UTF-8")
            }
            queue.async {
                handler.received(text: text)
                socket.inboundProcessed(count)
            }
        }
        // Flow control: a handler that cannot keep up (a recogniser fed faster than real time) stops the reading,
        // so its queue — and the memory behind it — stays bounded and TCP slows the client down.
        if socket.inboundQueued(count) { lws_rx_flow_control(wsi, 0) }
        return 0
    }

    private func closeNow(_ wsi: OpaquePointer, code: lws_close_status, reason: String) -> Int32 {
        Self.setCloseReason(wsi, code: code, reason: reason)
        return -1
    }

    /// The code and reason of the close frame lws sends when it closes `wsi`; the reason is cut to the 123 bytes
    /// a close frame can carry.
    private static func setCloseReason(_ wsi: OpaquePointer, code: lws_close_status, reason: String) {
        var bytes = Array(reason.utf8.prefix(123))
        lws_close_reason(wsi, code, &bytes, bytes.count)
    }

    private func webSocketWriteable(_ wsi: OpaquePointer) -> Int32 {
        guard let connection = connections[wsi], let socket = connection.socket else { return 0 }
        if connection.outgoing == nil {
            connection.outgoing = socket.takeMessage()
            connection.outgoingOffset = 0
        }
        if let message = connection.outgoing {
            let offset = connection.outgoingOffset
            var count = min(message.bytes.count - offset, Self.chunkBytes)
            if clws_is_http2(wsi) != 0 {
                // Over HTTP/2 each fragment rides in one DATA frame: keep it (with its 14-byte WebSocket header)
                // within the 16 KiB frame size and the stream's flow-control window.
                count = min(count, 16 * 1024 - 14)
                let allowance = clws_write_allowance(wsi)
                if allowance >= 0 && count > max(0, Int(allowance) - 14) {
                    if allowance <= 14 && count > 0 {
                        lws_callback_on_writable(wsi)
                        return 0
                    }
                    count = Int(allowance) - 14
                }
            }
            let last = offset + count == message.bytes.count
            let failed = message.bytes.withUnsafeBufferPointer { bytes in
                clws_write_websocket(wsi, bytes.baseAddress.map { $0 + offset }, count, message.binary ? 1 : 0,
                                     offset == 0 ? 1 : 0, last ? 1 : 0) != 0
            }
            if failed { return -1 }
            if last {
                connection.outgoing = nil
            } else {
                connection.outgoingOffset += count
            }
            lws_callback_on_writable(wsi)
            return 0
        }
        let (hasMessages, closeRequest) = socket.pendingState()
        if hasMessages {
            lws_callback_on_writable(wsi)
            return 0
        }
        if let closeRequest {
            return closeNow(wsi, code: lws_close_status(UInt32(closeRequest.code)), reason: closeRequest.reason)
        }
        return 0
    }
}

/// The C callback lws calls for every event; `lws_context_user` holds the (unretained) `LWSServer`, which
/// outlives its context.
private func lwsCallback(_ wsi: OpaquePointer?, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?,
                         _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
    guard let wsi, let context = lws_get_context(wsi), let owner = lws_context_user(context) else { return 0 }
    let server = Unmanaged<LWSServer>.fromOpaque(owner).takeUnretainedValue()
    return server.handle(wsi, reason, input, length)
}

private func withOptionalCString<T>(_ text: String?, _ body: (UnsafePointer<CChar>?) -> T) -> T {
    guard let text else { return body(nil) }
    return text.withCString { body($0) }
}
