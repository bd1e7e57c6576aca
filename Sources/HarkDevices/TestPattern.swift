import Foundation

/// The simulated camera's picture: eight colour bars over a black caption band that names the camera and
/// carries the frame number and capture time, drawn with `PixelFont` into a packed RGB raster.
struct TestPattern {
    /// An 8-bit RGB colour.
    struct Colour: Equatable, Sendable {
        var red: UInt8, green: UInt8, blue: UInt8
    }

    /// The bars left to right: 100% white, yellow, cyan, green, magenta, red, blue, black (EBU order).
    static let bars: [Colour] = [
        Colour(red: 255, green: 255, blue: 255), Colour(red: 255, green: 255, blue: 0),
        Colour(red: 0, green: 255, blue: 255), Colour(red: 0, green: 255, blue: 0),
        Colour(red: 255, green: 0, blue: 255), Colour(red: 255, green: 0, blue: 0),
        Colour(red: 0, green: 0, blue: 255), Colour(red: 0, green: 0, blue: 0),
    ]

    let width: Int
    let height: Int
    /// Packed RGB, `width × height × 3` bytes, rows top to bottom.
    private(set) var rgb: [UInt8]

    /// Rows `0..<barsHeight` hold the bars; the caption band below them.
    var barsHeight: Int { height * 3 / 4 }

    /// The horizontal extent of bar `index` (0…7): the width split as evenly as integers allow.
    func barColumns(_ index: Int) -> Range<Int> {
        (index * width / Self.bars.count)..<((index + 1) * width / Self.bars.count)
    }

    /// A black raster.
    init(width: Int, height: Int) {
        self.width = width
        self.height = height
        rgb = [UInt8](repeating: 0, count: width * height * 3)
    }

    /// The full picture for frame `frame` taken at `time`, the clock read in `timeZone`.
    init(width: Int, height: Int, frame: Int, time: Date, timeZone: TimeZone) {
        self.init(width: width, height: height)
        for (index, colour) in Self.bars.enumerated() {
            let columns = barColumns(index)
            fill(x: columns.lowerBound, y: 0, width: columns.count, height: barsHeight, colour)
        }
        let frameText = "FRAME \(String(format: "%06d", frame))", stamp = Self.timestamp(time, timeZone)
        // Two lines when they fit the width at the smallest scale, else the frame and time on their own lines.
        let wide = ["HARK SIMULATED CAMERA", "\(frameText)  \(stamp)"]
        let lines = Self.fits(wide, width: width, scale: 1) ? wide : [frameText, stamp]
        // The largest scale at which every line fits the width and the lines fit the band (9 font rows
        // per line and one line's worth of margin); 1 at worst, clipped at the edges.
        let band = height - barsHeight
        let longest = lines.map(\.count).max() ?? 1
        let scale = max(1, min((width - 4) / (longest * PixelFont.advance), band / ((lines.count + 1) * (PixelFont.glyphHeight + 2))))
        let lineHeight = (PixelFont.glyphHeight + 2) * scale
        var top = barsHeight + (band - lines.count * lineHeight) / 2
        for line in lines {
            let lineWidth = line.count * PixelFont.advance * scale
            draw(line, x: max(0, (width - lineWidth) / 2), y: top, scale: scale, Colour(red: 255, green: 255, blue: 255))
            top += lineHeight
        }
    }

    /// Whether every line fits `width` (with a 2-pixel margin each side) at `scale`.
    private static func fits(_ lines: [String], width: Int, scale: Int) -> Bool {
        lines.allSatisfy { $0.count * PixelFont.advance * scale <= width - 4 }
    }

    /// Paints a rectangle, clipped to the raster.
    mutating func fill(x: Int, y: Int, width: Int, height: Int, _ colour: Colour) {
        let left = max(0, x), right = min(self.width, x + width)
        let top = max(0, y), bottom = min(self.height, y + height)
        // Entirely outside (text clipped at a small size): nothing to paint.
        guard left < right, top < bottom else { return }
        // Row by row, a run of whole pixels at a time: a 640×480 picture pixel by pixel through the array's
        // bounds checks was a third of a simulated capture (bench/README.md, the server benchmark).
        let runBytes = (right - left) * 3
        let rasterWidth = self.width
        rgb.withUnsafeMutableBufferPointer { raster in
            let first = raster.baseAddress! + (top * rasterWidth + left) * 3
            for column in 0..<(right - left) {
                first[column * 3] = colour.red
                first[column * 3 + 1] = colour.green
                first[column * 3 + 2] = colour.blue
            }
            for row in (top + 1)..<bottom {
                (raster.baseAddress! + (row * rasterWidth + left) * 3).update(from: first, count: runBytes)
            }
        }
    }

    /// Draws `text` with its top-left corner at (`x`, `y`), each font pixel a `scale × scale` square.
    mutating func draw(_ text: String, x: Int, y: Int, scale: Int, _ colour: Colour) {
        for (index, character) in text.enumerated() {
            let left = x + index * PixelFont.advance * scale
            for (row, bits) in PixelFont.rows(character).enumerated() {
                for column in 0..<PixelFont.glyphWidth where bits & (0b10000 >> UInt8(column)) != 0 {
                    fill(x: left + column * scale, y: y + row * scale, width: scale, height: scale, colour)
                }
            }
        }
    }

    /// `2026-11-30 05:40:12`: the Gregorian date and 24-hour time in `timeZone`.
    static func timestamp(_ time: Date, _ timeZone: TimeZone) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: time)
        return String(format: "%04d-%02d-%02d %02d:%02d:%02d", parts.year ?? 0, parts.month ?? 0, parts.day ?? 0,
                      parts.hour ?? 0, parts.minute ?? 0, parts.second ?? 0)
    }
}
