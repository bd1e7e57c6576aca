import Foundation
@testable import HarkDevices

/// Synthetic pictures and the measurements the camera and JPEG tests share.
enum JPEGTestImages {
    /// A smooth RGB picture with every channel varying: red across, green down, blue in rings.
    static func gradient(width: Int, height: Int) -> [UInt8] {
        var rgb = [UInt8](repeating: 0, count: width * height * 3)
        for y in 0..<height {
            for x in 0..<width {
                let offset = (y * width + x) * 3
                rgb[offset] = UInt8(x * 255 / max(width - 1, 1))
                rgb[offset + 1] = UInt8(y * 255 / max(height - 1, 1))
                let distance = Double((x - width / 2) * (x - width / 2) + (y - height / 2) * (y - height / 2)).squareRoot()
                rgb[offset + 2] = UInt8(127.5 + 127.5 * cos(distance / 12))
            }
        }
        return rgb
    }

    /// RGB to YUYV with BT.601 (JFIF) coefficients, each pair of pixels sharing its averaged chroma;
    /// limited range scales Y to 16…235 and Cb/Cr to 16…240. `padding` bytes end each row.
    static func yuyv(fromRGB rgb: [UInt8], width: Int, height: Int, range: YUVRange, padding: Int = 0) -> [UInt8] {
        let rowBytes = width * 2 + padding
        var yuyv = [UInt8](repeating: 0xEE, count: rowBytes * height)
        func ycbcr(_ offset: Int) -> (Double, Double, Double) {
            let r = Double(rgb[offset]), g = Double(rgb[offset + 1]), b = Double(rgb[offset + 2])
            return (0.299 * r + 0.587 * g + 0.114 * b,
                    128 - 0.168736 * r - 0.331264 * g + 0.5 * b,
                    128 + 0.5 * r - 0.418688 * g - 0.081312 * b)
        }
        func luma(_ value: Double) -> UInt8 {
            UInt8(clamping: Int((range == .limited ? 16 + value * 219 / 255 : value).rounded()))
        }
        func chroma(_ value: Double) -> UInt8 {
            UInt8(clamping: Int((range == .limited ? 128 + (value - 128) * 224 / 255 : value).rounded()))
        }
        for y in 0..<height {
            for x in stride(from: 0, to: width, by: 2) {
                let left = ycbcr((y * width + x) * 3), right = ycbcr((y * width + x + 1) * 3)
                let target = y * rowBytes + x * 2
                yuyv[target] = luma(left.0)
                yuyv[target + 1] = chroma((left.1 + right.1) / 2)
                yuyv[target + 2] = luma(right.0)
                yuyv[target + 3] = chroma((left.2 + right.2) / 2)
            }
        }
        return yuyv
    }

    /// Peak signal-to-noise ratio between two 8-bit pictures of the same size, in dB.
    static func psnr(_ a: [UInt8], _ b: [UInt8]) -> Double {
        precondition(a.count == b.count && !a.isEmpty, "PSNR needs two pictures of the same size")
        let squared = zip(a, b).reduce(0.0) { sum, pair in
            let difference = Double(pair.0) - Double(pair.1)
            return sum + difference * difference
        }
        guard squared > 0 else { return .infinity }
        return 10 * log10(255 * 255 / (squared / Double(a.count)))
    }

    /// The marker segments before the first scan: marker byte, offset of its `FF`, whole length.
    static func segments(_ jpeg: [UInt8]) -> [(marker: UInt8, offset: Int, length: Int)] {
        var segments: [(UInt8, Int, Int)] = []
        var position = 2
        while position + 3 < jpeg.count, jpeg[position] == 0xFF {
            let marker = jpeg[position + 1]
            let length = 2 + (Int(jpeg[position + 2]) << 8 | Int(jpeg[position + 3]))
            segments.append((marker, position, length))
            if marker == 0xDA { break }
            position += length
        }
        return segments
    }

    /// `jpeg` without its DHT segments: what a UVC camera's MJPEG frame looks like.
    static func strippingHuffmanTables(_ jpeg: [UInt8]) -> [UInt8] {
        var stripped = jpeg
        for segment in segments(jpeg).reversed() where segment.marker == 0xC4 {
            stripped.removeSubrange(segment.offset..<(segment.offset + segment.length))
        }
        return stripped
    }

    /// The mean colour of a square of `radius` around (`x`, `y`) in packed RGB.
    static func meanColour(_ rgb: [UInt8], width: Int, x: Int, y: Int, radius: Int = 4) -> (Double, Double, Double) {
        var sums = (0.0, 0.0, 0.0), count = 0.0
        for row in (y - radius)...(y + radius) {
            for column in (x - radius)...(x + radius) {
                let offset = (row * width + column) * 3
                sums.0 += Double(rgb[offset]); sums.1 += Double(rgb[offset + 1]); sums.2 += Double(rgb[offset + 2])
                count += 1
            }
        }
        return (sums.0 / count, sums.1 / count, sums.2 / count)
    }
}
