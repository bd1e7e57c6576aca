import CALSA
import Foundation

/// A PCM device alsa-lib knows by name (`snd_device_name_hint`).
public struct ALSADevice: Sendable, Equatable {
    /// What to pass as `device:` (`default`, `sysdefault:CARD=PCH`, `plughw:CARD=PCH,DEV=0`, …).
    public var name: String
    /// alsa-lib's description (card and device names; may span lines), or "" when it has none.
    public var description: String
    public var canCapture: Bool
    public var canPlay: Bool

    public init(name: String, description: String, canCapture: Bool, canPlay: Bool) {
        self.name = name
        self.description = description
        self.canCapture = canCapture
        self.canPlay = canPlay
    }
}

/// The PCM devices the ALSA configuration and the sound cards define.
/// The corresponding C functions are `snd_device_name_hint`, `snd_device_name_get_hint` and
/// `snd_device_name_free_hint`.
public enum ALSADevices {
    /// Every PCM device with its description and direction. Empty on a machine with no sound card and
    /// no configured PCMs.
    public static func list() throws(ALSAError) -> [ALSADevice] {
        ALSAError.beginCall()
        var hints: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
        try ALSAError.check(snd_device_name_hint(-1, "pcm", &hints), "snd_device_name_hint", device: "pcm",
                            message: "cannot list ALSA devices")
        guard let hints else { return [] }
        defer { snd_device_name_free_hint(hints) }
        var devices = [ALSADevice]()
        var index = 0
        while let hint = hints[index] {
            index += 1
            guard let name = take(hint, "NAME") else { continue }
            // IOID is absent for devices that do both directions.
            let direction = take(hint, "IOID")
            devices.append(ALSADevice(name: name, description: take(hint, "DESC") ?? "",
                                      canCapture: direction != "Output", canPlay: direction != "Input"))
        }
        return devices
    }

    /// Devices that can record.
    public static func capture() throws(ALSAError) -> [ALSADevice] { try list().filter(\.canCapture) }

    /// Devices that can play.
    public static func playback() throws(ALSAError) -> [ALSADevice] { try list().filter(\.canPlay) }

    /// One field of a hint as a Swift string; alsa-lib allocates it with malloc, so it is freed here.
    private static func take(_ hint: UnsafeMutableRawPointer, _ field: String) -> String? {
        guard let value = snd_device_name_get_hint(hint, field) else { return nil }
        defer { free(value) }
        return String(cString: value)
    }
}
