import Foundation
import HarkAppliance
import HarkCore
import HarkHTTP
import HarkRooms

/// `hark link URL CODE`: pairs this appliance with another appliance's server, so it can join that server's
/// drop-in rooms (`rooms.server`); the token and the pinned certificate go to `<data>/rooms-link.json`.
enum LinkCommand: Command {
    static let name = "link"
    static let abstract = "Pair with another appliance's server to join its drop-in rooms (an intercom)"
    static let usage = """
        USAGE: hark link URL CODE [--fingerprint SHA256] [--data DIR]

        Pairs with the Hark at URL (http://HOST:PORT or https://HOST:PORT, as its log prints it) using a pairing
        code from that appliance (`hark pair` there, or the code it speaks), and keeps the token and, for https,
        the SHA-256 of its certificate in DIR/rooms-link.json (0600). Then "rooms": {"server": URL} in this
        appliance's configuration makes it a member of that server's rooms instead of its own.
        The certificate is trusted on first use: compare the fingerprint printed here with the one the other
        appliance prints when it starts, or give it beforehand with --fingerprint (colons allowed), and the link
        is refused if it differs.
          --data DIR           this appliance's data directory (default $HARK_DATA, else $XDG_DATA_HOME/hark,
                               else ~/.local/share/hark)
        """

    static func run(_ args: inout Arguments) throws -> Int32 {
        let data = try args.option("--data")
        let expected = try args.option("--fingerprint", parse: { Fingerprint.bytes(hex: $0).flatMap { $0.count == 32 ? $0 : nil } },
                                       expected: "a SHA-256 fingerprint: 64 hex digits, colons allowed")
        let positionals = try args.positionals()
        try args.finish()
        guard positionals.count == 2 else { throw UsageError(message: "expected URL and CODE, got \(positionals.count) argument(s)") }
        let (url, code) = (positionals[0], positionals[1])
        guard code.count == 6, code.allSatisfy(\.isASCII), code.allSatisfy(\.isNumber) else {
            throw UsageError(message: "CODE: a pairing code is 6 digits, not \"\(code)\"")
        }
        let address: ServerAddress
        do { address = try ServerAddress(url: url) } catch { throw UsageError(message: "URL: \(error.message)") }
        if expected != nil && !address.secure { throw UsageError(message: "--fingerprint: \(url) is plain http, which has no certificate") }

        var seen: [UInt8]?
        let answer: HTTPClientResponse
        do throws(ClientError) {
            answer = try HTTPClient.request(address, method: "POST", path: "/api/pair", json: .object(JSONObject([("code", .string(code))])),
                                            pin: expected, allowUnpinned: expected == nil) { seen = $0 }
        } catch {
            throw CommandFailure(message: "cannot pair with \(address): \(error.message)")
        }
        guard answer.status == 200 else { throw CommandFailure(message: "\(address) refused the code: \(answer.errorMessage) (\(answer.status))") }
        guard let token = (try? answer.json("POST /api/pair"))?["token"]?.stringValue else {
            throw CommandFailure(message: "\(address) answered the pairing without a token: is it a Hark server?")
        }
        let directory = data.map { DataDirectory(url: URL(fileURLWithPath: $0, isDirectory: true)) } ?? DataDirectory.default
        let file = RoomsLink.fileURL(in: directory.url)
        let link = RoomsLink(server: address.description, token: token, certificateSHA256: seen.map(Fingerprint.hex))
        do { try link.save(to: file) } catch { throw CommandFailure(message: error.message) }
        Output.line("linked to \(address); the token is in \(file.path)")
        if let seen {
            Output.line("its certificate's SHA-256 is \(Fingerprint.display(seen))" + (expected == nil ? " (check it against what that appliance prints)" : " (as given)"))
        }
        Output.line("to join its rooms, put \"rooms\": {\"server\": \"\(address)\"} in this appliance's configuration")
        return 0
    }
}
