import Testing
@testable import HarkHTTP

/// `HostPolicy` on its own: names, ports and brackets, and the machine's own addresses looked up when asked.
@Suite struct HostPolicyTests {
    @Test func namesPortsAndBrackets() {
        let policy = HostPolicy(names: ["Hark.Example", "::1"])
        for allowed in ["hark.example", "HARK.example:8443", "hark.example.", "[::1]:8080"] {
            #expect(policy.refusal(HTTPRequest(method: "GET", path: "/", headers: ["host": allowed])) == nil, "\(allowed)")
        }
        for refused in ["evil.example", "hark.example.evil.example", "[::2]", ":8080", "a:b:c"] {
            #expect(policy.refusal(HTTPRequest(method: "GET", path: "/", headers: ["host": refused])) != nil, "\(refused)")
        }
        #expect(policy.refusal(HTTPRequest(method: "GET", path: "/", headers: ["origin": "file://"])) != nil)
        #expect(policy.refusal(HTTPRequest(method: "GET", path: "/", headers: ["origin": "https://hark.example:8443"])) == nil)
    }

    @Test func theMachinesOwnAddressesAreAllowedWithoutBeingListed() {
        let policy = HostPolicy(names: [], interfaceAddresses: true)
        #expect(policy.allows("127.0.0.1"))  // lo's address, found by getifaddrs at the check
        #expect(!policy.allows("192.0.2.77"))  // TEST-NET-1: no interface has it
        #expect(!HostPolicy(names: []).allows("127.0.0.1"))
    }
}
