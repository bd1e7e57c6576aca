import Testing
import Foundation
@testable import HarkAudio
import HarkTestSupport

/// Real alsa-lib capture and playback with no sound card: the `file` PCM plugin over a `null` slave
/// (docs/measurements.md, "Audio without a sound card"), defined in a temporary asoundrc passed as
/// `configFile:` so no environment is needed.
@Suite struct ALSATests {
    /// A temporary asoundrc defining `harkmic` (reads `input`) and `harkspk` (writes `output` as WAV).
    static func configuration(in dir: URL, input: String, output: String) throws -> String {
        let text = """
        pcm.harkmic { type file  slave.pcm { type null }  file "/dev/null"  infile "\(input)"  format "raw" }
        pcm.harkspk { type file  slave.pcm { type null }  file "\(output)"  format "wav" }
        """
        let path = dir.appendingPathComponent("asoundrc").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test func captureThroughTheFilePluginReturnsTheFileSamples() throws {
        let dir = try AudioFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let input = dir.appendingPathComponent("in.raw").path
        let original = AudioFixtures.noise(frames: 8_000, amplitude: 15_000, seed: 11)
        try AudioFile.write(original, to: input)
        let config = try Self.configuration(in: dir, input: input, output: dir.appendingPathComponent("unused.wav").path)

        let capture = try ALSACapture(device: "harkmic", format: .speech, configFile: config)
        #expect(capture.format == .speech)
        var captured = [Int16]()
        // The plugin returns stale data after its input ends, so read exactly what was written.
        while captured.count < original.frameCount {
            let block = try #require(try capture.read(maxFrames: min(1_000, original.frameCount - captured.count)))
            #expect(block.format == .speech && !block.isEmpty)
            captured += block.samples
        }
        #expect(captured == original.samples)
    }

    @Test func aDeviceReportsItsBufferAndStartsWithNoXruns() throws {
        let dir = try AudioFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let config = try Self.configuration(in: dir, input: "/dev/null", output: dir.appendingPathComponent("out.wav").path)
        let playback = try ALSAPlayback(device: "harkspk", format: .speech, latency: 0.5, configFile: config)
        // alsa-lib picks sizes near the asked-for latency: a buffer of a few periods, about 0.5 s.
        #expect(playback.bufferFrames >= 4_000 && playback.bufferFrames <= 16_000)
        #expect(playback.periodFrames > 0 && playback.periodFrames <= playback.bufferFrames)
        #expect(playback.underruns.isEmpty && playback.underrunCount == 0)
    }

    @Test func xrunsAreSummedAndUnmeasuredOnesSaidSo() {
        let now = ContinuousClock.now
        #expect([ALSAXrun]().summary() == "0")
        let measured = [ALSAXrun(at: now, seconds: 0.25), ALSAXrun(at: now, seconds: 1.0)]
        #expect(measured.lostSeconds == 1.25)
        #expect(measured.summary() == "2 (1.25 s lost)")
        let mixed = measured + [ALSAXrun(at: now, seconds: nil)]
        #expect(mixed.summary(lost: "of gaps") == "3 (≥ 1.25 s of gaps; 1 unmeasured)")
    }

    @Test func playbackThroughTheFilePluginWritesAWAVThatReadsBackEqual() throws {
        let dir = try AudioFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let output = dir.appendingPathComponent("out.wav").path
        let config = try Self.configuration(in: dir, input: "/dev/null", output: output)
        let stereo = PCMFormat(sampleRate: 22_050, channels: 2)
        let original = AudioFixtures.noise(frames: 11_025, amplitude: 15_000, seed: 12, format: stereo)
        do {
            let playback = try ALSAPlayback(device: "harkspk", format: stereo, configFile: config)
            for start in stride(from: 0, to: original.samples.count, by: 2_000) {
                try playback.write(PCMBuffer(format: stereo, samples: Array(original.samples[start..<min(start + 2_000, original.samples.count)])))
            }
            #expect(throws: PCMFormatError.self) { try playback.write(AudioFixtures.silence(seconds: 0.01)) }
            try playback.drain()
        }
        // Closing the PCM (above) is what finalises the plugin's WAV header.
        let back = try AudioFile.read(output)
        #expect(back.format == stereo)
        #expect(back.samples == original.samples)
    }

    @Test func anUnknownDeviceIsNamed() throws {
        let dir = try AudioFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let config = try Self.configuration(in: dir, input: "/dev/null", output: "/dev/null")
        for configFile in [config, nil] {
            let error = try #require(caught(ALSAError.self) { try ALSACapture(device: "hark_no_such_pcm", configFile: configFile) })
            #expect(error.device == "hark_no_such_pcm")
            #expect(error.function == "snd_pcm_open")
            #expect(error.description.contains("no such device 'hark_no_such_pcm'"))
            #expect(error.libraryMessage?.contains("hark_no_such_pcm") == true)
        }
        #expect(throws: ALSAError.self) { try ALSAPlayback(device: "hark_no_such_pcm", configFile: config) }
    }

    @Test func aMissingDefaultDeviceSaysThereIsNoConfigurationOrCard() {
        // On a machine with a sound card `default` opens and there is nothing to check.
        do {
            _ = try ALSACapture(device: "default")
        } catch where error.code == -ENOENT {
            #expect(error.description.contains("no ALSA configuration or sound card"))
            #expect(error.description.contains("'default'"))
        } catch {
            #expect(error.device == "default")
        }
    }

    @Test func aMissingOrBrokenConfigFileIsNamed() throws {
        let dir = try AudioFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let missing = dir.appendingPathComponent("nope.asoundrc").path
        let error = try #require(caught(ALSAError.self) { try ALSACapture(device: "harkmic", configFile: missing) })
        #expect(error.description.contains(missing))
        let broken = dir.appendingPathComponent("broken.asoundrc").path
        try "pcm.harkmic { type file ".write(toFile: broken, atomically: true, encoding: .utf8)
        let syntax = try #require(caught(ALSAError.self) { try ALSACapture(device: "harkmic", configFile: broken) })
        #expect(syntax.function == "snd_config_load")
        #expect(syntax.description.contains(broken))
    }

    @Test func listingDevicesWorksWithOrWithoutACard() throws {
        let devices = try ALSADevices.list()
        // Every entry has a name and at least one direction; a machine with no card may list none or a few.
        for device in devices {
            #expect(!device.name.isEmpty)
            #expect(device.canCapture || device.canPlay)
        }
        #expect(try ALSADevices.capture().allSatisfy(\.canCapture))
    }
}
