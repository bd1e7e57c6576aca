/// Where the server listens: `tcp://HOST:PORT`, the form Wyoming programs take in `--uri`.
public struct WyomingAddress: Sendable, Equatable, CustomStringConvertible {
    public var host: String
    public var port: Int

    /// Home Assistant's Wyoming services conventionally use 10300 (asr), 10200 (tts), 10400 (wake); 10700 is
    /// free of them, and Hark serves all of its services on one port.
    public static let `default` = WyomingAddress(host: "127.0.0.1", port: 10_700)

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// Parses `tcp://HOST:PORT` (`[v6]` for an IPv6 host); the error says what is wrong with it.
    public init(uri: String) throws(WyomingAddressError) {
        guard uri.hasPrefix("tcp://") else {
            throw WyomingAddressError(message: "\"\(uri)\": expected tcp://HOST:PORT (only TCP is served)")
        }
        let rest = uri.dropFirst("tcp://".count)
        guard let colon = rest.lastIndex(of: ":") else {
            throw WyomingAddressError(message: "\"\(uri)\": missing :PORT (e.g. tcp://127.0.0.1:10700)")
        }
        var host = String(rest[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty else { throw WyomingAddressError(message: "\"\(uri)\": missing HOST (e.g. 127.0.0.1, or 0.0.0.0 for every interface)") }
        guard let port = Int(rest[rest.index(after: colon)...]), (0...65_535).contains(port) else {
            throw WyomingAddressError(message: "\"\(uri)\": the port must be a number 0…65535 (0: any free port)")
        }
        self.host = host
        self.port = port
    }

    public var description: String { host.contains(":") ? "tcp://[\(host)]:\(port)" : "tcp://\(host):\(port)" }
}

/// A `--uri` that is not `tcp://HOST:PORT`, with what is wrong with it.
public struct WyomingAddressError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}
