#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import HarkCore

/// Which names a browser may use to reach this server, checked against `Host` (`:authority` over HTTP/2) and
/// `Origin` where a foreign page could do harm: WebSocket upgrades and pairing, login and logout.
///
/// A page on another site can make a browser send requests here (a form posting a guess at the pairing code,
/// a WebSocket), and through DNS rebinding it can even make its own name point at this server, so `Host`
/// names the attacker's domain. Both are refused with 403 unless the name is one of this machine's: its host
/// name (also with `.local`, for mDNS), the addresses of its interfaces, `localhost` and loopback, and the
/// names configured (`server.host_names`). Requests with neither header (curl, a Watson client) are not
/// browsers and pass: they could not have been steered by a web page.
public struct HostPolicy: Sendable, Equatable {
    /// Allowed names, lower case, IPv6 addresses without brackets.
    public var names: Set<String>
    /// Also allow the addresses the machine's interfaces have at the moment of the check (`getifaddrs`), so
    /// an address DHCP hands out after start-up works without a restart.
    public var interfaceAddresses: Bool

    public init(names: some Sequence<String>, interfaceAddresses: Bool = false) {
        self.names = Set(names.map { $0.lowercased() })
        self.interfaceAddresses = interfaceAddresses
    }

    /// The machine's own names and current addresses, plus `extra`.
    public static func local(extra: [String] = []) -> HostPolicy {
        var names = ["localhost", "127.0.0.1", "::1"] + extra
        let host = ProcessInfo.processInfo.hostName
        if !host.isEmpty {
            names.append(host)
            if !host.contains(".") { names.append(host + ".local") }
            names.append(String(host.split(separator: ".").first ?? Substring(host)))
        }
        return HostPolicy(names: names, interfaceAddresses: true)
    }

    /// Why `request` may not proceed, or nil when its `Host` and `Origin` are acceptable.
    public func refusal(_ request: HTTPRequest) -> String? {
        if let host = request.header("host"), !host.isEmpty {
            guard let name = Self.hostName(host), allows(name) else {
                return "Host \"\(host)\" is not a name of this appliance (a page on another site, or DNS rebinding); "
                    + "use its own address or add the name to server.host_names"
            }
        }
        if let origin = request.header("origin") {
            guard let url = URL(string: origin), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
                  let host = url.host, allows(Self.bare(host)) else {
                return "Origin \"\(origin)\" is another site: only this appliance's own page may do this"
            }
        }
        return nil
    }

    /// Whether `name` (a host without port) is allowed.
    public func allows(_ name: String) -> Bool {
        let name = Self.bare(name)
        if names.contains(name) { return true }
        // Only something shaped like an address is looked up: a name never matches an interface.
        guard interfaceAddresses, name.contains(":") || name.allSatisfy({ $0.isNumber || $0 == "." }) else { return false }
        return Self.currentInterfaceAddresses().contains(name)
    }

    /// The host part of a `Host` value: `name`, `name:port`, `[v6]`, `[v6]:port`; nil when malformed.
    static func hostName(_ value: String) -> String? {
        let text = value.trimmingWhitespace()
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            return String(text[text.index(after: text.startIndex)..<close])
        }
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count <= 2, let first = parts.first, !first.isEmpty else { return nil }
        return String(first)
    }

    private static func bare(_ host: String) -> String {
        var h = host
        if h.hasPrefix("[") && h.hasSuffix("]") { h = String(h.dropFirst().dropLast()) }
        if h.hasSuffix(".") { h.removeLast() }
        return h.lowercased()
    }

    /// Numeric addresses of every interface (`getifaddrs`), lower case, IPv6 zones dropped.
    static func currentInterfaceAddresses() -> Set<String> {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0 else { return [] }
        defer { freeifaddrs(list) }
        var result: Set<String> = []
        var cursor = list
        while let entry = cursor {
            defer { cursor = entry.pointee.ifa_next }
            guard let address = entry.pointee.ifa_addr else { continue }
            let family = Int32(address.pointee.sa_family)
            guard family == AF_INET || family == AF_INET6 else { continue }
            var text = [CChar](repeating: 0, count: Int(NI_MAXHOST))
            let length = socklen_t(family == AF_INET ? MemoryLayout<sockaddr_in>.size : MemoryLayout<sockaddr_in6>.size)
            guard getnameinfo(address, length, &text, socklen_t(text.count), nil, 0, NI_NUMERICHOST) == 0 else { continue }
            let name = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            result.insert(String(name.split(separator: "%").first ?? Substring(name)).lowercased())
        }
        return result
    }
}
