import Foundation
import HarkAppliance
import HarkAudio
import HarkCore
import HarkDevices

/// `hark devices`: what hardware this machine has, and what the configuration maps onto it.
enum DevicesCommand: Command {
    static let name = "devices"
    static let abstract = "List audio devices, GPIO chips and lines, cameras, and what the configuration uses"
    static let usage = """
        USAGE: hark devices [--config FILE] [--json]

        Lists ALSA capture and playback devices, GPIO chips with their lines (name, consumer, direction),
        V4L2 cameras with their formats, and then how the configuration's devices resolve: which chip line
        is the light, the LED and the button, which camera takes pictures, and whether each is real or
        simulated (and why). A configured device that cannot be opened is shown with its error; the exit
        status is then 69.
          --config FILE  configuration to resolve (default: the built-in defaults, as `hark run` without one)
          --json         one JSON object instead of text
        """

    static func run(_ args: inout Arguments) throws -> Int32 {
        let configPath = try args.option("--config")
        let json = try args.flag("--json")
        try args.finish()
        let configuration = try ApplianceSetup.configuration(configPath)

        var audio: [ALSADevice] = []
        var audioProblem: String?
        do { audio = try ALSADevices.list() } catch { audioProblem = error.description }
        let chips = GPIOChips.list()
        let cameras = V4L2Devices.list()
        var mapping: [String] = []
        var mappingProblem: String?
        do {
            let devices = try DeviceSet.open(configuration)
            mapping = devices.descriptions
            if !devices.simulated.isEmpty {
                mapping.append("simulated: \(devices.simulated.joined(separator: ", "))"
                    + (configuration.simulate == .always ? " (configuration says simulate: true)" : " (no GPIO chip or camera on this machine)"))
            }
        } catch {
            mappingProblem = error.message
        }
        let capture = "\(configuration.captureDevice)\(audio.contains { $0.name == configuration.captureDevice && $0.canCapture } ? "" : " (not listed by ALSA)")"
        let playback = "\(configuration.playbackDevice)\(audio.contains { $0.name == configuration.playbackDevice && $0.canPlay } ? "" : " (not listed by ALSA)")"

        if json {
            var o = JSONObject()
            o["audio"] = .array(audio.map { d in
                ["name": .string(d.name), "description": .string(d.description), "capture": .bool(d.canCapture), "playback": .bool(d.canPlay)]
            })
            if let audioProblem { o["audio_error"] = .string(audioProblem) }
            o["gpio_chips"] = .array(chips.map { c in
                var chip: JSONObject = ["name": .string(c.name), "path": .string(c.path), "label": .string(c.label), "lines": .number(Double(c.lineCount))]
                chip["line_info"] = .array(c.lines.map { l in
                    ["offset": .number(Double(l.offset)), "name": l.name.map { .string($0) } ?? .null,
                     "consumer": l.consumer.map { .string($0) } ?? .null, "direction": .string("\(l.direction)"),
                     "active_low": .bool(l.activeLow), "used": .bool(l.used)]
                })
                if let e = c.error { chip["error"] = .string(e) }
                return .object(chip)
            })
            o["cameras"] = .array(cameras.map { v in
                var cam: JSONObject = ["path": .string(v.path), "card": .string(v.card), "driver": .string(v.driver),
                                       "capture": .bool(v.isCaptureDevice)]
                cam["formats"] = .array(v.formats.map { f in
                    ["format": .string(f.pixelFormat.description), "sizes": .array(f.sizes.map { .string($0.description) })]
                })
                if let p = v.problem { cam["problem"] = .string(p) }
                return .object(cam)
            })
            var configured: JSONObject = ["capture": .string(configuration.captureDevice), "playback": .string(configuration.playbackDevice)]
            configured["devices"] = .array(mapping.map { .string($0) })
            if let mappingProblem { configured["error"] = .string(mappingProblem) }
            o["configuration"] = .object(configured)
            Output.line(JSONValue.object(o).serialized(pretty: true))
        } else {
            Output.line("Audio (ALSA):")
            if let audioProblem { Output.line("  \(audioProblem)") }
            if audio.isEmpty && audioProblem == nil { Output.line("  none") }
            for d in audio {
                let roles = [d.canCapture ? "capture" : nil, d.canPlay ? "playback" : nil].compactMap { $0 }.joined(separator: ", ")
                Output.line("  \(d.name)  [\(roles)]  \(d.description.split(separator: "\n").first.map(String.init) ?? "")")
            }
            Output.line("GPIO chips:")
            if chips.isEmpty { Output.line("  none (no /dev/gpiochip*)") }
            for c in chips {
                Output.line("  \(c.description)")
                for l in c.lines where l.used || l.name != nil {
                    Output.line("    line \(l.offset): \(l.name ?? "unnamed")  \(l.direction)\(l.activeLow ? " active-low" : "")\(l.used ? "  used by \"\(l.consumer ?? "kernel")\"" : "")")
                }
            }
            Output.line("Cameras (V4L2):")
            if cameras.isEmpty { Output.line("  none (no /dev/video*)") }
            for v in cameras {
                let formats = v.formats.map { "\($0.pixelFormat)\($0.sizes.isEmpty ? "" : " " + $0.sizes.map(\.description).joined(separator: " "))" }
                Output.line("  \(v.path)  \(v.card) (\(v.driver))\(v.problem.map { "  \($0)" } ?? "")\(formats.isEmpty ? "" : "  " + formats.joined(separator: "; "))")
            }
            Output.line("Configuration (\(configPath ?? "defaults")):")
            Output.line("  microphone: \(capture)")
            Output.line("  speaker: \(playback)")
            for m in mapping { Output.line("  \(m)") }
            if let mappingProblem { Output.line("  error: \(mappingProblem)") }
        }
        return mappingProblem == nil ? 0 : 69
    }
}
