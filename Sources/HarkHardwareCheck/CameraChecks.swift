import Foundation
import HarkDevices

/// V4L2 through `V4L2Camera` against vivid: a real driver's frames become JPEGs of the configured size.
enum CameraChecks {
    static let all: [HardwareCheck] = [
        HardwareCheck(name: "camera.capture", summary: "V4L2Camera captures vivid frames; each JPEG decodes to the configured size", run: capture),
        HardwareCheck(name: "camera.missing", summary: "a missing video device is an error naming it", run: missing),
    ]

    /// vivid's video capture node, found the way `hark devices` finds cameras.
    static func vivid() throws -> V4L2DeviceInfo {
        let devices = V4L2Devices.list()
        guard let vivid = devices.first(where: { $0.driver == "vivid" && $0.isCaptureDevice }) else {
            throw CheckFailure("no vivid capture node among \(devices.map { "\($0.path) (\($0.driver))" })")
        }
        return vivid
    }

    static func capture(_ context: CheckContext) throws -> String {
        let info = try vivid()
        let decoder = try JPEGDecoder()
        var lines: [String] = []
        for (width, height) in [(640, 480), (1280, 720)] {
            let camera = try V4L2Camera(device: info.path, width: width, height: height)
            try expect(!camera.sizeWasAdjusted, "\(info.path) gave \(camera.width)×\(camera.height) for \(width)×\(height)")
            var size = 0
            // Twice: each capture starts and stops streaming, so the second proves the device is left reusable.
            for _ in 0..<2 {
                let picture = try camera.capture()
                let decoded = try decoder.decodeRGB(picture.jpeg)
                try expect(decoded.width == width && decoded.height == height,
                           "the JPEG decodes to \(decoded.width)×\(decoded.height), configured \(width)×\(height)")
                try expect(picture.width == width && picture.height == height,
                           "Picture says \(picture.width)×\(picture.height), configured \(width)×\(height)")
                // vivid's test pattern is colour bars: a blank or constant frame means no real frame was taken.
                let rgb = decoded.rgb
                // Spelled out with types: Swift 6.0.3 (Debian 13) gives up type-checking the one-expression form.
                let colours = stride(from: 0, to: rgb.count - 2, by: 3 * 97).map { (i: Int) -> UInt32 in
                    let red = UInt32(rgb[i]) << 16, green = UInt32(rgb[i + 1]) << 8
                    return red | green | UInt32(rgb[i + 2])
                }
                let distinct = Set(colours).count
                try expect(distinct > 4, "the frame is nearly uniform (\(distinct) distinct colours sampled)")
                size = picture.jpeg.count
            }
            lines.append("\(width)×\(height) \(camera.pixelFormat) → \(size / 1024) KB JPEG")
        }
        return "\(info.path) [\(info.card), \(info.driver)]: " + lines.joined(separator: ", ") + ", each decoded to its size, 2 captures each"
    }

    static func missing(_ context: CheckContext) throws -> String {
        let absent = try expectError(CameraError.self, "opening /dev/video9") {
            _ = try V4L2Camera(device: "/dev/video9", width: 640, height: 480)
        }
        try expect(absent.message.contains("/dev/video9"), "missing camera: the error does not name /dev/video9: \(absent.message)")
        return absent.message
    }
}
