import CALSA
import CHarkShim
import Foundation

/// An error from alsa-lib: the device, the C function, its code (a negative errno), a readable message, and
/// what alsa-lib itself said (captured through `chark_alsa_capture_errors` instead of printed to stderr).
public struct ALSAError: Error, CustomStringConvertible, Sendable {
    /// The PCM device name (`default`, `hw:0,0`, `plughw:1`, a name from a config file).
    public var device: String
    /// The alsa-lib function that failed, or the step that found the problem.
    public var function: String
    /// The negative errno alsa-lib returned, or -1 when Hark found the problem.
    public var code: Int32
    /// What is wrong, in words.
    public var message: String
    /// alsa-lib's own last message for this failure, if it printed one ("Unknown PCM foo").
    public var libraryMessage: String?

    public init(device: String, function: String, code: Int32, message: String, libraryMessage: String? = nil) {
        self.device = device
        self.function = function
        self.code = code
        self.message = message
        self.libraryMessage = libraryMessage
    }

    public var description: String {
        var text = "ALSA device '\(device)': \(message) (\(function): \(ALSAError.strerror(code)))"
        if let libraryMessage { text += " [alsa-lib: \(libraryMessage)]" }
        return text
    }

    /// alsa-lib's wording for `code`. The corresponding C function is `snd_strerror`.
    static func strerror(_ code: Int32) -> String {
        code == -1 ? "failed" : String(cString: snd_strerror(code))
    }

    /// Starts routing alsa-lib's messages into the per-thread buffer and empties it, so the next
    /// `takeLibraryMessage` sees only what the following call said.
    static func beginCall() {
        chark_alsa_capture_errors()
        _ = takeLibraryMessage()
    }

    /// alsa-lib's last message on this thread, or nil. The corresponding C function is `chark_alsa_take_last_error`.
    static func takeLibraryMessage() -> String? {
        var buffer = [CChar](repeating: 0, count: 512)
        chark_alsa_take_last_error(&buffer, buffer.count)
        let text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return text.isEmpty ? nil : text
    }

    /// Throws when `code` is negative, with `message` (or `snd_strerror`'s text) and alsa-lib's own words.
    static func check(_ code: Int32, _ function: String, device: String, message: @autoclosure () -> String? = nil) throws(ALSAError) {
        guard code < 0 else { return }
        throw ALSAError(device: device, function: function, code: code,
                        message: message() ?? ALSAError.strerror(code), libraryMessage: takeLibraryMessage())
    }

    /// The error for a failed `snd_pcm_open`, saying what the code means for someone choosing a device.
    static func open(device: String, code: Int32, configFile: String?) -> ALSAError {
        let library = takeLibraryMessage()
        let message: String
        switch -code {
        case ENOENT, ENODEV, ENXIO, EINVAL:
            if device == "default" || device.hasPrefix("default:") {
                message = "no such device: there is no ALSA configuration or sound card that defines '\(device)'"
                    + " (\"Unknown PCM default\" means no sound card and no asoundrc)"
            } else if device.hasPrefix("hw:") || device.hasPrefix("plughw:") {
                message = "no such device '\(device)': no sound card or device with that number or name"
            } else {
                message = "no such device '\(device)'"
                    + (configFile.map { " in the ALSA configuration or in \($0)" } ?? " in the ALSA configuration")
            }
        case EBUSY, EAGAIN:
            message = "device '\(device)' is busy: another program is using it"
        case EACCES, EPERM:
            message = "permission denied opening '\(device)' (is the user in the 'audio' group?)"
        default:
            message = "cannot open '\(device)': \(strerror(code))"
        }
        return ALSAError(device: device, function: "snd_pcm_open", code: code, message: message, libraryMessage: library)
    }
}
