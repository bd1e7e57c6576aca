import Foundation
import HarkHTTPTestSupport
import Synchronization
import Testing
@testable import HarkHTTP

private let chromiumPath = "/usr/bin/chromium"

/// Headless Chromium against the server: the one client here that speaks HTTP/2 and WebSockets over HTTP/2
/// (RFC 8441, which lws offers), as phones' browsers will.
@Suite("TLS in a browser", .enabled(if: FileManager.default.isExecutableFile(atPath: chromiumPath),
                                     "needs /usr/bin/chromium (Debian package chromium)"))
struct TLSBrowserTests {
    /// The page fetches JSON and a large body, opens a refused, an unknown and an echoing WebSocket, then posts
    /// what it saw to /report. The script is a file of its own: the server's Content-Security-Policy forbids
    /// inline scripts, and this checks that a page obeying it works over HTTP/2 and HTTP/1.1.
    static let page = """
        <html><body><script src="/web/page.js"></script></body></html>
        """
    static let script = """
        const out = [];
        const report = () => fetch('/report', {method: 'POST', body: out.join(' ')});
        const socket = (path) => new WebSocket('wss://' + location.host + path);
        (async () => {
          out.push('hello:' + JSON.stringify(await (await fetch('/hello')).json()));
          out.push('big:' + (await (await fetch('/big/3000000')).arrayBuffer()).byteLength);
          const closes = [];
          for (const path of ['/ws/x?token=bad', '/nowhere']) {
            closes.push(new Promise((done) => { socket(path).onclose = (e) => { out.push('refused:' + e.code); done(); }; }));
          }
          closes.push(new Promise((done) => {
            const ws = socket('/ws/echo');
            let count = 0;
            ws.onopen = () => { ws.send('hi'); ws.send('x'.repeat(300000)); ws.send(new Uint8Array(200000)); };
            ws.onmessage = (e) => {
              out.push('echo:' + (typeof e.data === 'string' ? e.data.length : e.data.size));
              if (++count == 3) ws.close(1000);
            };
            ws.onclose = (e) => { out.push('closed:' + e.code); done(); };
          }));
          await Promise.all(closes);
          report();
        })().catch((e) => { out.push('error:' + e); report(); });
        """

    @Test(arguments: [true, false])
    func pageFetchesAndWebSocketsWork(http2: Bool) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hark-browser-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let web = directory.appendingPathComponent("web")
        try FileManager.default.createDirectory(at: web, withIntermediateDirectories: true)
        try Data(Self.page.utf8).write(to: web.appendingPathComponent("index.html"))
        try Data(Self.script.utf8).write(to: web.appendingPathComponent("page.js"))
        let files = try SelfSignedCertificate.ensure(directory: directory, hostnames: [])

        var router = webSocketRouter(base: sampleRouter()) { EchoHandler() }
        router.staticFiles = StaticFiles(directory: web)
        let report = Mutex<String?>(nil)
        let reported = DispatchSemaphore(value: 0)
        router.route("POST", "/report") { request, _ in
            report.withLock { $0 = String(decoding: request.body, as: UTF8.self) }
            reported.signal()
            return .json(200, [:])
        }
        let configuration = ServerConfiguration(
            port: 0, tls: .init(certificate: files.certificate, privateKey: files.key, http2: http2))
        try withServer(router, configuration: configuration) { server in
            let browser = Process()
            browser.executableURL = URL(fileURLWithPath: chromiumPath)
            browser.arguments = ["--headless", "--no-sandbox", "--disable-gpu", "--ignore-certificate-errors",
                                 "--user-data-dir=\(directory.appendingPathComponent("profile").path)",
                                 "--remote-debugging-port=0", "https://localhost:\(server.port)/"]
            browser.standardOutput = FileHandle.nullDevice
            browser.standardError = FileHandle.nullDevice
            try browser.run()
            defer {
                browser.terminate()
                browser.waitUntilExit()
            }
            #expect(reported.wait(timeout: .now() + 30) == .success, "the page never reported")
        }
        let seen = try #require(report.withLock { $0 }).split(separator: " ").map(String.init)
        #expect(seen.first == #"hello:{"hello":"world"}"#)
        #expect(seen.contains("big:3000000"))
        #expect(seen.filter { $0 == "echo:2" || $0 == "echo:300000" || $0 == "echo:200000" }.count == 3)
        #expect(seen.contains("closed:1000"))
        // Over HTTP/1.1 a refused upgrade is a failed handshake (1006) to a page; over HTTP/2 the socket opens
        // and closes with 4000 + the status.
        let refusals = Set(seen.filter { $0.hasPrefix("refused:") })
        #expect(refusals == (http2 ? ["refused:4401", "refused:4404"] : ["refused:1006"]))
    }
}
