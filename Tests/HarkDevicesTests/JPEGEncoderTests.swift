import Foundation
import Testing
@testable import HarkDevices

@Suite("JPEG encoder")
struct JPEGEncoderTests {
    let encoder: JPEGEncoder
    let decoder: JPEGDecoder

    init() throws {
        encoder = try JPEGEncoder()
        decoder = try JPEGDecoder()
    }

    @Test("RGB encodes to a JPEG that decodes back close to the source")
    func rgbRoundTrip() throws {
        let source = JPEGTestImages.gradient(width: 160, height: 120)
        let jpeg = try encoder.encodeRGB(source, width: 160, height: 120, quality: 90)
        #expect(jpeg.prefix(2) == [0xFF, 0xD8])
        #expect(jpeg.suffix(2) == [0xFF, 0xD9])
        let decoded = try decoder.decodeRGB(jpeg)
        #expect(decoded.width == 160 && decoded.height == 120)
        #expect(JPEGTestImages.psnr(source, decoded.rgb) > 38)
    }

    @Test("YUYV decodes back close to the RGB it was made from", arguments: [YUVRange.limited, .full])
    func yuyvRoundTrip(range: YUVRange) throws {
        let (width, height) = (320, 240)
        let source = JPEGTestImages.gradient(width: width, height: height)
        let yuyv = JPEGTestImages.yuyv(fromRGB: source, width: width, height: height, range: range)
        let jpeg = try encoder.encodeYUYV(yuyv, width: width, height: height, range: range, quality: 90)
        let decoded = try decoder.decodeRGB(jpeg)
        #expect(decoded.width == width && decoded.height == height)
        #expect(JPEGTestImages.psnr(source, decoded.rgb) > 38)
    }

    @Test("Limited-range YUYV taken as full range loses contrast: the range setting matters")
    func rangeMatters() throws {
        let source = JPEGTestImages.gradient(width: 160, height: 120)
        let yuyv = JPEGTestImages.yuyv(fromRGB: source, width: 160, height: 120, range: .limited)
        let right = try decoder.decodeRGB(try encoder.encodeYUYV(yuyv, width: 160, height: 120, range: .limited, quality: 90))
        let wrong = try decoder.decodeRGB(try encoder.encodeYUYV(yuyv, width: 160, height: 120, range: .full, quality: 90))
        #expect(JPEGTestImages.psnr(source, right.rgb) > JPEGTestImages.psnr(source, wrong.rgb) + 6)
    }

    @Test("YUYV rows with padding (bytesperline beyond width × 2) are read with the stride")
    func yuyvStride() throws {
        let source = JPEGTestImages.gradient(width: 96, height: 64)
        let padded = JPEGTestImages.yuyv(fromRGB: source, width: 96, height: 64, range: .full, padding: 32)
        let jpeg = try encoder.encodeYUYV(padded, width: 96, height: 64, bytesPerLine: 96 * 2 + 32, range: .full, quality: 90)
        #expect(JPEGTestImages.psnr(source, try decoder.decodeRGB(jpeg).rgb) > 38)
    }

    @Test("Higher quality gives a larger file")
    func qualityChangesSize() throws {
        let source = JPEGTestImages.gradient(width: 160, height: 120)
        let low = try encoder.encodeRGB(source, width: 160, height: 120, quality: 20)
        let high = try encoder.encodeRGB(source, width: 160, height: 120, quality: 95)
        #expect(high.count > low.count)
    }

    @Test("Bad arguments are refused with a message that says what is wrong")
    func badArguments() {
        let rgb = [UInt8](repeating: 0, count: 16 * 16 * 3)
        let cases: [(String, () throws(CameraError) -> [UInt8])] = [
            ("quality 0 is out of range", { () throws(CameraError) in try encoder.encodeRGB(rgb, width: 16, height: 16, quality: 0) }),
            ("quality 101 is out of range", { () throws(CameraError) in try encoder.encodeRGB(rgb, width: 16, height: 16, quality: 101) }),
            ("RGB buffer holds 768 bytes, 16×17 needs 816", { () throws(CameraError) in try encoder.encodeRGB(rgb, width: 16, height: 17, quality: 80) }),
            ("size 0×16 is out of range", { () throws(CameraError) in try encoder.encodeRGB([], width: 0, height: 16, quality: 80) }),
            ("even width", { () throws(CameraError) in try encoder.encodeYUYV(rgb, width: 15, height: 16, quality: 80) }),
            ("YUYV frame holds 768 bytes", { () throws(CameraError) in try encoder.encodeYUYV(rgb, width: 32, height: 16, quality: 80) }),
            ("row stride 10 is shorter", { () throws(CameraError) in try encoder.encodeYUYV(rgb, width: 16, height: 16, bytesPerLine: 10, quality: 80) }),
        ]
        for (expected, call) in cases {
            #expect(throws: CameraError.self, "\(expected)") { try call() }
            do {
                _ = try call()
            } catch {
                #expect(error.message.contains(expected), "\(error.message)")
                #expect(error.message.hasPrefix("JPEG"), "\(error.message)")
            }
        }
    }
}
