import Foundation

/// The web page's files: `GET /` is `index.html`, `GET /web/<file>` any file under the directory, with its
/// content type. Nothing outside the directory is reachable: `..`, `.` and hidden path segments are refused,
/// and a path that resolves (through symbolic links) outside the directory is 404.
public struct StaticFiles: Sendable {
    /// The `web/` directory.
    public let directory: URL

    public init(directory: URL) {
        self.directory = directory.standardizedFileURL
    }

    /// The file's response, 404 for a missing file under `/web/`, 405 for a method other than GET/HEAD; nil when
    /// the path is not the page's (neither `/` nor under `/web/`).
    public func response(for request: HTTPRequest) -> HTTPResponse? {
        let relative: String
        if request.path == "/" {
            relative = "index.html"
        } else if request.path.hasPrefix("/web/") {
            relative = String(request.path.dropFirst("/web/".count))
        } else {
            return nil
        }
        guard request.method == "GET" || request.method == "HEAD" else {
            return .error(405, code: "method_not_allowed", message: "\(request.path) accepts GET, HEAD")
                .adding(header: "allow", value: "GET, HEAD")
        }
        let notFound = HTTPResponse.error(404, code: "not_found", message: "no such file: \(request.path)")
        let segments = relative.split(separator: "/", omittingEmptySubsequences: false)
        guard !segments.isEmpty, segments.allSatisfy({ segment in
            !segment.isEmpty && !segment.hasPrefix(".") && !segment.contains("\\") && !segment.contains("\0")
        }) else { return notFound }

        let root = directory.resolvingSymlinksInPath().path
        let file = directory.appendingPathComponent(relative).resolvingSymlinksInPath()
        guard file.path.hasPrefix(root.hasSuffix("/") ? root : root + "/") else { return notFound }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: file.path, isDirectory: &isDirectory), !isDirectory.boolValue
        else { return notFound }
        guard let data = FileManager.default.contents(atPath: file.path) else {
            return .error(500, code: "internal", message: "cannot read \(request.path) from \(directory.path)")
        }
        return HTTPResponse.bytes(200, Self.contentType(of: file.pathExtension), [UInt8](data))
            .adding(header: "cache-control", value: "no-cache")
    }

    /// The content type for a file name extension; unknown ones are `application/octet-stream`.
    public static func contentType(of pathExtension: String) -> String {
        switch pathExtension.lowercased() {
        case "html", "htm": return "text/html; charset=utf-8"
        case "js", "mjs": return "text/javascript; charset=utf-8"
        case "css": return "text/css; charset=utf-8"
        case "json", "map": return "application/json; charset=utf-8"
        case "webmanifest": return "application/manifest+json"
        case "txt": return "text/plain; charset=utf-8"
        case "svg": return "image/svg+xml"
        case "png": return "image/png"
        case "jpg", "jpeg": return "image/jpeg"
        case "gif": return "image/gif"
        case "webp": return "image/webp"
        case "ico": return "image/x-icon"
        case "wav": return "audio/wav"
        case "wasm": return "application/wasm"
        case "woff2": return "font/woff2"
        case "woff": return "font/woff"
        default: return "application/octet-stream"
        }
    }
}
