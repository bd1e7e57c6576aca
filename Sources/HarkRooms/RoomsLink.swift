import Foundation
import HarkAppliance
import HarkCore
import HarkHTTP

/// How this appliance gets into another appliance's rooms (`rooms.server`): that server's address, the device
/// token it gave when `hark link` paired with it, and the SHA-256 of its certificate, pinned at that moment
/// (docs/rooms.md, "Another appliance's rooms"). Kept in `<data>/rooms-link.json`, mode 0600: the token is a
/// paired device's.
public struct RoomsLink: Sendable, Equatable {
    public static let fileName = "rooms-link.json"

    public var server: String
    public var token: String
    /// Lower-case hex; nil for plain `http` (loopback tests, or a LAN the user trusts).
    public var certificateSHA256: String?

    public init(server: String, token: String, certificateSHA256: String?) {
        self.server = server
        self.token = token
        self.certificateSHA256 = certificateSHA256
    }

    public static func fileURL(in dataDirectory: URL) -> URL { dataDirectory.appendingPathComponent(fileName) }

    public var address: ServerAddress {
        get throws(ClientError) { try ServerAddress(url: server) }
    }

    /// The pinned certificate's hash as bytes.
    public var pin: [UInt8]? { certificateSHA256.flatMap(Fingerprint.bytes(hex:)) }

    /// Reads the link; every problem names the file and the field.
    public static func load(from url: URL) throws(RoomsError) -> RoomsLink {
        guard let data = FileManager.default.contents(atPath: url.path) else {
            throw RoomsError(.notFound, "\(url.path): no link to another appliance's rooms; run `hark link URL CODE` with a pairing code from that appliance")
        }
        let value: JSONValue
        do { value = try JSONValue.parse(data) } catch { throw RoomsError(.storage, "\(url.path): not JSON: \(error)") }
        func text(_ key: String) throws(RoomsError) -> String {
            guard let text = value[key]?.stringValue, !text.isEmpty else { throw RoomsError(.storage, "\(url.path): \"\(key)\" must be a non-empty string") }
            return text
        }
        let link = RoomsLink(server: try text("server"), token: try text("token"), certificateSHA256: value["certificate_sha256"]?.stringValue)
        do throws(ClientError) {
            let address = try link.address
            if address.secure, link.pin?.count != 32 {
                throw ClientError("an https server needs \"certificate_sha256\", 64 hex digits")
            }
        } catch {
            throw RoomsError(.storage, "\(url.path): \(error.message)")
        }
        return link
    }

    /// Writes the link, 0600, replacing any other atomically.
    public func save(to url: URL) throws(RoomsError) {
        var object = JSONObject([("server", .string(server)), ("token", .string(token))])
        if let certificateSHA256 { object["certificate_sha256"] = .string(certificateSHA256) }
        if let problem = PrivateFiles.ensureDirectory(url.deletingLastPathComponent()) {
            throw RoomsError(.storage, "\(url.path): cannot create its directory: \(problem)")
        }
        do throws(PrivateFiles.WriteFailure) {
            try PrivateFiles.writeAtomically(JSONValue.object(object).serializedBytes(pretty: true), to: url, temporarySuffix: ".partial")
        } catch {
            throw RoomsError(.storage, "\(url.path): cannot write it (\(error.path)): \(error.reason)")
        }
    }
}
