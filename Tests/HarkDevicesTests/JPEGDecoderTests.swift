import Foundation
import Testing
@testable import HarkDevices

@Suite("JPEG decoder and MJPEG frames")
struct JPEGDecoderTests {
    let encoder: JPEGEncoder
    let decoder: JPEGDecoder
    let source: [UInt8]
    let jpeg: [UInt8]

    init() throws {
        encoder = try JPEGEncoder()
        decoder = try JPEGDecoder()
        source = JPEGTestImages.gradient(width: 128, height: 96)
        jpeg = try encoder.encodeRGB(source, width: 128, height: 96, quality: 85)
    }

    @Test("JPEGInfo.read gives the size from the header")
    func readsSize() throws {
        let size = try JPEGInfo.read(jpeg)
        #expect(size.width == 128 && size.height == 96)
    }

    @Test("What is not a JPEG is named as such")
    func notAJPEG() {
        for bytes: [UInt8] in [[], [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A], Array("hello world".utf8)] {
            do {
                _ = try JPEGInfo.read(bytes)
                Issue.record("\(bytes) was read as a JPEG")
            } catch {
                #expect(error.message.contains("not a JPEG") || error.message.contains("too short"), "\(error.message)")
            }
        }
    }

    @Test("A truncated frame fails to decode (libjpeg's warning is an error here)")
    func truncated() throws {
        let truncated = Array(jpeg.prefix(jpeg.count / 2))
        // The header is intact, so only a full decode finds the damage: the reason the MJPEG path decodes.
        #expect(try JPEGInfo.read(truncated) == (128, 96))
        do {
            _ = try decoder.validate(truncated)
            Issue.record("a truncated JPEG decoded")
        } catch {
            #expect(error.function == "tjDecompress2")
            #expect(error.message.contains("Premature end"), "\(error.message)")
        }
    }

    @Test("A header claiming a huge picture is refused before anything is allocated")
    func hugeHeader() throws {
        var huge = jpeg
        let frame = try #require(JPEGTestImages.segments(jpeg).first { $0.marker == 0xC0 })
        huge.replaceSubrange((frame.offset + 5)..<(frame.offset + 9), with: [0xEA, 0x60, 0xEA, 0x60]) // 60000×60000
        #expect(try JPEGInfo.read(huge) == (60_000, 60_000))
        do {
            _ = try decoder.decodeRGB(huge)
            Issue.record("a 60000×60000 picture was decoded")
        } catch {
            #expect(error.message.contains("60000×60000 is too large to decode"), "\(error.message)")
        }
    }

    @Test("A frame without Huffman tables (as UVC cameras send) decodes to the same pixels")
    func withoutHuffmanTables() throws {
        let stripped = JPEGTestImages.strippingHuffmanTables(jpeg)
        #expect(stripped.count < jpeg.count)
        #expect(JPEGHuffmanTables.containsTables(stripped) == false)
        #expect(JPEGHuffmanTables.containsTables(jpeg) == true)
        #expect(try decoder.decodeRGB(stripped).rgb == decoder.decodeRGB(jpeg).rgb)
    }

    @Test("Inserting the standard tables makes the frame a complete JPEG with the same pixels")
    func insertsTables() throws {
        let stripped = JPEGTestImages.strippingHuffmanTables(jpeg)
        let repaired = try JPEGHuffmanTables.insertingStandardTables(into: stripped)
        #expect(JPEGHuffmanTables.containsTables(repaired) == true)
        #expect(repaired.count == stripped.count + JPEGHuffmanTables.standardSegment.count)
        let markers = JPEGTestImages.segments(repaired).map(\.marker)
        #expect(markers.suffix(2) == [0xC4, 0xDA], "DHT goes right before the scan: \(markers)")
        #expect(try decoder.decodeRGB(repaired).rgb == decoder.decodeRGB(jpeg).rgb)
        // A frame that has tables is left alone.
        #expect(try JPEGHuffmanTables.insertingStandardTables(into: jpeg) == jpeg)
    }

    @Test("The built-in tables are the ones libjpeg-turbo writes")
    func standardTablesMatchLibjpeg() {
        let tables = JPEGTestImages.segments(jpeg).filter { $0.marker == 0xC4 }.flatMap { segment in
            jpeg[(segment.offset + 4)..<(segment.offset + segment.length)]
        }
        let builtIn = Array(JPEGHuffmanTables.standardSegment.dropFirst(4))
        #expect(tables == builtIn)
        let declared = Int(JPEGHuffmanTables.standardSegment[2]) << 8 | Int(JPEGHuffmanTables.standardSegment[3])
        #expect(declared == JPEGHuffmanTables.standardSegment.count - 2)
    }

    @Test("Broken marker structure is refused, not repaired")
    func brokenMarkers() {
        let broken: [UInt8] = [0xFF, 0xD8, 0x12, 0x34, 0x00]
        #expect(JPEGHuffmanTables.containsTables(broken) == nil)
        #expect(throws: CameraError.self) { try JPEGHuffmanTables.insertingStandardTables(into: broken) }
    }
}
