import CV4L2
import Foundation
import Testing
@testable import HarkDevices

/// The V4L2 camera against the real system calls where no camera is needed (missing devices, files
/// that are not cameras), and against `FakeV4L2Driver` for the capture path.
@Suite("Camera: V4L2")
struct CameraV4L2Tests {
    static let hasVideoDevice = FileManager.default.fileExists(atPath: "/dev/video0")
    static let source = JPEGTestImages.gradient(width: 320, height: 240)

    /// A camera on a fake driver, two warm-up frames, a short timeout.
    func camera(_ driver: FakeV4L2Driver, width: Int = 320, height: Int = 240, warmUpFrames: Int = 2) throws(CameraError) -> V4L2Camera {
        try V4L2Camera(device: driver.configuration.path, width: width, height: height, quality: 90,
                       warmUpFrames: warmUpFrames, frameTimeout: .milliseconds(200), system: driver)
    }

    /// Frames of the test gradient in YUYV at whatever size was negotiated (320×240 here).
    static func gradientFrames(range: YUVRange = .limited, padding: Int = 0) -> @Sendable (Int, V4L2FrameFormat) -> (bytes: [UInt8], damaged: Bool)? {
        let frame = JPEGTestImages.yuyv(fromRGB: source, width: 320, height: 240, range: range, padding: padding)
        return { _, _ in (frame, false) }
    }

    /// Checks the driver was left as found: not streaming, nothing mapped, buffers released.
    func expectReleased(_ driver: FakeV4L2Driver, sourceLocation: SourceLocation = #_sourceLocation) {
        driver.inspect { state in
            #expect(!state.streaming, "still streaming", sourceLocation: sourceLocation)
            #expect(state.mapped.isEmpty, "buffers still mapped: \(state.mapped)", sourceLocation: sourceLocation)
            #expect(state.buffers.isEmpty, "buffers not released with REQBUFS 0", sourceLocation: sourceLocation)
        }
    }

    // MARK: Real system calls, no camera needed

    @Test("A missing device is named, with the devices that do exist")
    func missingDevice() {
        do {
            _ = try V4L2Camera(device: "/dev/video9", width: 640, height: 480)
            Issue.record("/dev/video9 opened")
        } catch {
            #expect(error.message.hasPrefix("/dev/video9: no such device ("), "\(error.message)")
            #expect(error.function == "open" && error.code == ENOENT)
            let existing = LinuxV4L2SystemCalls().videoDevicePaths()
            if existing.isEmpty {
                #expect(error.message.contains("there are no /dev/video* devices on this machine"), "\(error.message)")
            } else {
                #expect(error.message.contains("existing: \(existing.joined(separator: ", "))"), "\(error.message)")
            }
        }
    }

    @Test("Something that is not a camera is refused as \"not a video capture device\"")
    func notACamera() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("hark-camera-\(UUID().uuidString).bin")
        try Data("not a camera".utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        for path in ["/dev/null", file.path, FileManager.default.temporaryDirectory.path] {
            do {
                _ = try V4L2Camera(device: path, width: 640, height: 480)
                Issue.record("\(path) was taken for a camera")
            } catch {
                #expect(error.message.hasPrefix("\(path): not a video capture device"), "\(error.message)")
            }
        }
    }

    @Test("Invalid sizes and settings are refused before the device is opened",
          arguments: [(0, 480, 85, 5), (640, 0, 85, 5), (-640, 480, 85, 5), (9000, 480, 85, 5), (640, 480, 0, 5), (640, 480, 85, -1)])
    func invalidSettings(settings: (width: Int, height: Int, quality: Int, warmUp: Int)) {
        do {
            _ = try V4L2Camera(device: "/dev/video9", width: settings.width, height: settings.height,
                               quality: settings.quality, warmUpFrames: settings.warmUp)
            Issue.record("\(settings) was accepted")
        } catch {
            #expect(error.code == EINVAL, "\(error.message)")
            #expect(!error.message.contains("no such device"), "checked after opening: \(error.message)")
            #expect(error.message.contains("16…8192") || error.message.contains("out of range"), "\(error.message)")
        }
    }

    @Test("No devices lists as empty", .enabled(if: !hasVideoDevice && LinuxV4L2SystemCalls().videoDevicePaths().isEmpty,
                                                 "this machine has /dev/video* devices"))
    func listsNothing() {
        #expect(V4L2Devices.list().isEmpty)
    }

    @Test("A real camera captures a JPEG of the size it reports",
          .enabled(if: hasVideoDevice, "needs /dev/video0: runs in the VM lane with the vivid driver (issue 6)"))
    func realCapture() throws {
        let camera = try V4L2Camera(device: "/dev/video0", width: 640, height: 480)
        let picture = try camera.capture()
        #expect(picture.width == camera.width && picture.height == camera.height)
        #expect(try JPEGDecoder().validate(picture.jpeg) == (camera.width, camera.height))
        #expect(picture.source.hasPrefix("/dev/video0 "))
        let info = try #require(V4L2Devices.list().first { $0.path == "/dev/video0" })
        #expect(info.isCaptureDevice && !info.formats.isEmpty)
    }

    // MARK: The capture path, on the fake driver

    @Test("YUYV capture: warm-up frames dropped, the frame encoded, the device released")
    func yuyvCapture() throws {
        let driver = FakeV4L2Driver(.init(frame: Self.gradientFrames()))
        let camera = try camera(driver)
        #expect(camera.pixelFormat == .yuyv && camera.width == 320 && camera.height == 240 && !camera.sizeWasAdjusted)
        let picture = try camera.capture()
        #expect(picture.source == "/dev/video0 YUYV")
        #expect(picture.width == 320 && picture.height == 240)
        let decoded = try JPEGDecoder().decodeRGB(picture.jpeg)
        #expect(JPEGTestImages.psnr(Self.source, decoded.rgb) > 38)
        #expect(driver.inspect(\.dequeued) == 3)
        #expect(driver.inspect { $0.requests.contains("VIDIOC_STREAMOFF") })
        expectReleased(driver)
        _ = try camera.capture()
        #expect(driver.inspect(\.dequeued) == 6, "the second capture streams again")
        expectReleased(driver)
    }

    @Test("The frame kept is the first one after the warm-up", arguments: [0, 1, 4])
    func warmUp(frames: Int) throws {
        // Frame n is a flat grey of limited-range luma 16 + 20n, neutral chroma.
        let driver = FakeV4L2Driver(.init(frame: { sequence, format in
            let pair: [UInt8] = [UInt8(16 + 20 * sequence), 128, UInt8(16 + 20 * sequence), 128]
            return (Array([[UInt8]](repeating: pair, count: format.width * format.height / 2).joined()), false)
        }))
        let picture = try camera(driver, warmUpFrames: frames).capture()
        let decoded = try JPEGDecoder().decodeRGB(picture.jpeg)
        let grey = JPEGTestImages.meanColour(decoded.rgb, width: 320, x: 160, y: 120).0
        let expected = Double(20 * frames) * 255 / 219
        #expect(abs(grey - expected) < 3, "grey \(grey), expected \(expected)")
    }

    @Test("The size the driver gives is reported")
    func adjustedSize() throws {
        let driver = FakeV4L2Driver(.init(frame: { _, format in
            ([UInt8](repeating: 128, count: format.width * format.height * 2), false)
        }))
        let camera = try camera(driver, width: 800, height: 600)
        #expect(camera.requestedWidth == 800 && camera.requestedHeight == 600)
        #expect(camera.width == 640 && camera.height == 480 && camera.sizeWasAdjusted)
        let picture = try camera.capture()
        #expect(try JPEGInfo.read(picture.jpeg) == (640, 480))
        #expect(picture.width == 640 && picture.height == 480)
    }

    @Test("Padded rows and full-range samples are encoded faithfully")
    func strideAndRange() throws {
        var configuration = FakeV4L2Driver.Configuration(frame: Self.gradientFrames(range: .full, padding: 64))
        configuration.rowPadding = 64
        configuration.quantization = V4L2_QUANTIZATION_FULL_RANGE
        let picture = try camera(FakeV4L2Driver(configuration)).capture()
        #expect(JPEGTestImages.psnr(Self.source, try JPEGDecoder().decodeRGB(picture.jpeg).rgb) > 38)
    }

    @Test("MJPEG: damaged frames are skipped, the good one is kept as the camera sent it, with Huffman tables")
    func mjpegCapture() throws {
        let jpeg = try JPEGEncoder().encodeRGB(Self.source, width: 320, height: 240, quality: 80)
        let stripped = JPEGTestImages.strippingHuffmanTables(jpeg)
        var configuration = FakeV4L2Driver.Configuration()
        configuration.formats = [.mjpeg]
        configuration.frame = { sequence, _ in
            switch sequence {
            case 0: (stripped, false) // warm-up
            case 1: (Array(stripped.prefix(stripped.count / 2)), false) // truncated
            case 2: (stripped, true) // flagged V4L2_BUF_FLAG_ERROR
            default: (stripped, false)
            }
        }
        let driver = FakeV4L2Driver(configuration)
        let camera = try camera(driver, warmUpFrames: 1)
        #expect(camera.pixelFormat == .mjpeg)
        let picture = try camera.capture()
        #expect(picture.source == "/dev/video0 MJPG" && picture.width == 320 && picture.height == 240)
        // Computed first: Swift 6.0.3 (Debian 13) rejects a parenthesised `try` inside #expect.
        let restored = try JPEGHuffmanTables.insertingStandardTables(into: stripped)
        #expect(picture.jpeg == restored)
        #expect(try JPEGDecoder().decodeRGB(picture.jpeg).rgb == JPEGDecoder().decodeRGB(jpeg).rgb)
        #expect(driver.inspect(\.dequeued) == 4)
        expectReleased(driver)
    }

    @Test("A short YUYV frame is skipped and the next one kept")
    func shortFrame() throws {
        let full = JPEGTestImages.yuyv(fromRGB: Self.source, width: 320, height: 240, range: .limited)
        let driver = FakeV4L2Driver(.init(frame: { sequence, _ in (sequence == 0 ? Array(full.prefix(1000)) : full, false) }))
        let picture = try camera(driver, warmUpFrames: 0).capture()
        #expect(JPEGTestImages.psnr(Self.source, try JPEGDecoder().decodeRGB(picture.jpeg).rgb) > 38)
        #expect(driver.inspect(\.dequeued) == 2)
    }

    @Test("A camera that only sends damaged frames fails after a few, naming the damage")
    func onlyDamagedFrames() throws {
        let jpeg = try JPEGEncoder().encodeRGB(Self.source, width: 320, height: 240, quality: 80)
        var configuration = FakeV4L2Driver.Configuration()
        configuration.formats = [.mjpeg]
        configuration.frame = { _, _ in (Array(jpeg.prefix(jpeg.count / 3)), false) }
        let driver = FakeV4L2Driver(configuration)
        do {
            _ = try camera(driver, warmUpFrames: 0).capture()
            Issue.record("a damaged frame was accepted")
        } catch {
            #expect(error.message.hasPrefix("/dev/video0: \(V4L2Camera.maximumDamagedFrames) damaged frames in one capture"), "\(error.message)")
            #expect(error.message.contains("Premature end"), "\(error.message)")
        }
        expectReleased(driver)
    }

    @Test("No frame arriving is a timeout error, and the device is released")
    func timeout() throws {
        let driver = FakeV4L2Driver(.init())
        do {
            _ = try camera(driver).capture()
            Issue.record("a capture with no frames succeeded")
        } catch {
            #expect(error.message.hasPrefix("/dev/video0: no frame within 0.2 s (after 0 frames)"), "\(error.message)")
            #expect(error.code == ETIMEDOUT)
        }
        expectReleased(driver)
    }

    @Test("A busy device is reported as in use by another program")
    func busy() throws {
        var configuration = FakeV4L2Driver.Configuration(frame: Self.gradientFrames())
        configuration.failures = ["VIDIOC_REQBUFS": EBUSY]
        let camera = try camera(FakeV4L2Driver(configuration))
        #expect(throws: CameraError.self) { try camera.capture() }
        do {
            _ = try camera.capture()
        } catch {
            #expect(error.message.hasPrefix("/dev/video0: in use by another program (VIDIOC_REQBUFS: "), "\(error.message)")
        }
        configuration.failures = [:]
        configuration.openError = EBUSY
        #expect(performing: { _ = try self.camera(FakeV4L2Driver(configuration)) }, throws: { error in
            (error as? CameraError)?.message.hasPrefix("/dev/video0: in use by another program (open: ") == true
        })
    }

    @Test("A node that cannot capture video is refused, with what it can do")
    func notCapture() throws {
        var configuration = FakeV4L2Driver.Configuration()
        configuration.capabilities = UInt32(V4L2_CAP_META_CAPTURE) | UInt32(V4L2_CAP_STREAMING)
        do {
            _ = try camera(FakeV4L2Driver(configuration))
            Issue.record("a metadata node was taken for a camera")
        } catch {
            #expect(error.message.hasPrefix("/dev/video0: not a video capture device (driver fake, card \"Fake Camera\", capabilities: META_CAPTURE, STREAMING)"), "\(error.message)")
        }
        configuration.capabilities = UInt32(V4L2_CAP_VIDEO_CAPTURE_MPLANE) | UInt32(V4L2_CAP_STREAMING)
        do {
            _ = try camera(FakeV4L2Driver(configuration))
            Issue.record("a multi-planar node was taken for a camera")
        } catch {
            #expect(error.message.contains("multi-planar capture (VIDEO_CAPTURE_MPLANE) is not supported"), "\(error.message)")
        }
    }

    @Test("A device without YUYV or MJPEG is refused, naming the formats it offers")
    func unsupportedFormats() {
        var configuration = FakeV4L2Driver.Configuration()
        configuration.formats = [V4L2PixelFormat(rawValue: cv4l2_fourcc(0x52, 0x47, 0x42, 0x33)), // RGB3
                                 V4L2PixelFormat(rawValue: cv4l2_fourcc(0x4E, 0x56, 0x31, 0x32))] // NV12
        do {
            _ = try camera(FakeV4L2Driver(configuration))
            Issue.record("a device without a usable format was accepted")
        } catch {
            #expect(error.message == "/dev/video0: offers no format Hark can capture (YUYV, MJPEG, JPEG); it offers: RGB3 (RGB3 (fake)), NV12 (NV12 (fake))")
        }
    }

    @Test("YUYV is preferred; MJPEG is chosen when only it has the requested size")
    func formatChoice() throws {
        typealias Info = V4L2DeviceInfo
        let small = Info.FrameSize(width: 640, height: 480), large = Info.FrameSize(width: 1920, height: 1080)
        let info = Info(path: "/dev/video0", capabilities: UInt32(V4L2_CAP_VIDEO_CAPTURE) | UInt32(V4L2_CAP_STREAMING),
                        formats: [Info.Format(pixelFormat: .mjpeg, description: "Motion-JPEG", sizes: [small, large]),
                                  Info.Format(pixelFormat: .yuyv, description: "YUYV 4:2:2", sizes: [small])])
        #expect(try V4L2Camera.chooseFormat(info, width: 640, height: 480) == .yuyv)
        #expect(try V4L2Camera.chooseFormat(info, width: 1920, height: 1080) == .mjpeg)
        #expect(try V4L2Camera.chooseFormat(info, width: 1000, height: 1000) == .yuyv)
        let range = Info.SizeRange(minimum: .init(width: 16, height: 16), maximum: .init(width: 4096, height: 2160), step: .init(width: 2, height: 2))
        #expect(range.contains(width: 1000, height: 1000) && !range.contains(width: 1001, height: 1000) && !range.contains(width: 8192, height: 16))
    }

    @Test("Listing describes each node, and names the problem with one it cannot open")
    func listing() throws {
        let devices = V4L2Devices.list(system: FakeV4L2Driver(.init()))
        let device = try #require(devices.first)
        #expect(devices.count == 1 && device.path == "/dev/video0" && device.problem == nil)
        #expect(device.card == "Fake Camera" && device.driver == "fake" && device.bus == "platform:fake")
        #expect(device.capabilityNames == ["VIDEO_CAPTURE", "STREAMING"] && device.isCaptureDevice)
        #expect(device.formats.map(\.pixelFormat) == [.yuyv] && device.formats.first?.description == "YUYV 4:2:2")
        #expect(device.formats.first?.sizes == [.init(width: 320, height: 240), .init(width: 640, height: 480)])
        var configuration = FakeV4L2Driver.Configuration()
        configuration.openError = EACCES
        let denied = V4L2Devices.list(system: FakeV4L2Driver(configuration))
        #expect(denied.first?.problem?.hasPrefix("/dev/video0: permission denied") == true, "\(denied)")
    }
}
