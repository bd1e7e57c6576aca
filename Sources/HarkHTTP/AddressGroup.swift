#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The unit one client is counted as by the rate limiter and the connection caps: an IPv4 address as it is,
/// an IPv6 address by its /64 prefix. A single IPv6 host is normally given a whole /64 (SLAAC, privacy
/// addresses), so counting single IPv6 addresses would hand it 2⁶⁴ fresh allowances.
package enum AddressGroup {
    /// `"2001:db8:1:2::/64"` for any address in that /64; IPv4 (and IPv4-mapped IPv6) addresses and text that
    /// is not an address come back unchanged.
    package static func of(_ address: String) -> String {
        guard address.contains(":") else { return address }
        var bytes = in6_addr()
        // A zone ("fe80::1%eth0") names the interface: keep it with the prefix, as the same /64 may be on two.
        let parts = address.split(separator: "%", maxSplits: 1)
        guard inet_pton(AF_INET6, String(parts[0]), &bytes) == 1 else { return address }
        let raw = withUnsafeBytes(of: &bytes) { Array($0) }
        if raw[0..<10].allSatisfy({ $0 == 0 }) && raw[10] == 0xff && raw[11] == 0xff {
            return "\(raw[12]).\(raw[13]).\(raw[14]).\(raw[15])"
        }
        var prefix = in6_addr()
        withUnsafeMutableBytes(of: &prefix) { target in
            for i in 0..<8 { target[i] = raw[i] }
        }
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        guard inet_ntop(AF_INET6, &prefix, &text, socklen_t(text.count)) != nil else { return address }
        let zone = parts.count > 1 ? "%" + parts[1] : ""
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) + "/64" + zone
    }
}
