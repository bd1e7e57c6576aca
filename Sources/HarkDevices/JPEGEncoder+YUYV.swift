/// How a YCbCr source uses the 8-bit range.
public enum YUVRange: Sendable, Equatable {
    /// Studio swing: Y 16…235, Cb/Cr 16…240 (BT.601). V4L2's default for YUYV.
    case limited
    /// Y, Cb, Cr all 0…255, as JPEG/JFIF stores them (`V4L2_QUANTIZATION_FULL_RANGE`, the JPEG colourspace).
    case full
}

/// A YUYV frame split into the three planes `tjCompressFromYUVPlanes` takes (4:2:2: chroma planes are
/// half as wide as the luma plane, as tall).
struct YUYVPlanes {
    private(set) var luma: [UInt8]
    private(set) var blue: [UInt8]
    private(set) var red: [UInt8]
    let width: Int

    init(_ yuyv: UnsafeRawBufferPointer, width: Int, height: Int, stride: Int, range: YUVRange) {
        self.width = width
        let chromaWidth = width / 2
        let lumaTable = range == .limited ? Self.expansion(low: 16, span: 219) : Array(0...255)
        let chromaTable = range == .limited ? Self.expansion(low: 16, span: 224) : Array(0...255)
        luma = [UInt8](unsafeUninitializedCapacity: width * height) { y, count in
            count = width * height
            for row in 0..<height {
                let source = row * stride, target = row * width
                for x in 0..<width { y[target + x] = lumaTable[Int(yuyv[source + 2 * x])] }
            }
        }
        func chroma(_ offset: Int) -> [UInt8] {
            [UInt8](unsafeUninitializedCapacity: chromaWidth * height) { c, count in
                count = chromaWidth * height
                for row in 0..<height {
                    let source = row * stride + offset, target = row * chromaWidth
                    for x in 0..<chromaWidth { c[target + x] = chromaTable[Int(yuyv[source + 4 * x])] }
                }
            }
        }
        blue = chroma(1)
        red = chroma(3)
    }

    /// Maps `low…low+span` onto 0…255 (clamping what lies outside, which cameras do send).
    /// Chroma's midpoint 128 stays 128 because 16…240 is centred on it.
    private static func expansion(low: Int, span: Int) -> [UInt8] {
        (0...255).map { value in
            let scaled = ((value - low) * 255 * 2 + span) / (2 * span)
            return UInt8(clamping: value < low ? 0 : scaled)
        }
    }

    /// Calls `body` with the three plane pointers and their strides, as TurboJPEG's planar calls take them.
    mutating func withPlanePointers<R>(_ body: (UnsafeMutablePointer<UnsafePointer<UInt8>?>, UnsafePointer<Int32>) -> R) -> R {
        let strides: [Int32] = [Int32(width), Int32(width / 2), Int32(width / 2)]
        return luma.withUnsafeBufferPointer { y in
            blue.withUnsafeBufferPointer { cb in
                red.withUnsafeBufferPointer { cr in
                    var pointers: [UnsafePointer<UInt8>?] = [y.baseAddress, cb.baseAddress, cr.baseAddress]
                    return pointers.withUnsafeMutableBufferPointer { planes in
                        strides.withUnsafeBufferPointer { body(planes.baseAddress!, $0.baseAddress!) }
                    }
                }
            }
        }
    }
}
