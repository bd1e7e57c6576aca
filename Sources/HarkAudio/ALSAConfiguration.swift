import CALSA
import Foundation

/// alsa-lib's global configuration plus one extra file (an asoundrc), loaded without touching the
/// environment, so a program or a test can define its own PCMs (such as the `file` plugin recipe in
/// docs/measurements.md) and open them by name. The tree is deleted in `deinit`.
/// The corresponding C functions are `snd_config_update_ref`, `snd_config_copy`, `snd_config_load` and
/// `snd_config_delete`.
final class ALSAConfiguration {
    let handle: OpaquePointer
    let path: String

    /// Errors name `device`, the PCM the file was loaded for, and the file itself.
    init(loading path: String, for device: String) throws(ALSAError) {
        ALSAError.beginCall()
        guard FileManager.default.isReadableFile(atPath: path) else {
            throw ALSAError(device: device, function: "snd_input_stdio_open", code: -ENOENT,
                            message: "ALSA configuration file '\(path)' does not exist or is not readable")
        }
        // Start from the system configuration (alsa.conf and friends) so `default`, `hw:` and `plughw:`
        // keep working; a machine without it still gets the file's own definitions.
        var tree: OpaquePointer?
        var global: OpaquePointer?
        if snd_config_update_ref(&global) >= 0, let global {
            let copied = snd_config_copy(&tree, global)
            snd_config_unref(global)
            try ALSAError.check(copied, "snd_config_copy", device: device)
        } else {
            _ = ALSAError.takeLibraryMessage()
            try ALSAError.check(snd_config_top(&tree), "snd_config_top", device: device)
        }
        guard let tree else {
            throw ALSAError(device: device, function: "snd_config_top", code: -ENOMEM, message: "no configuration tree")
        }
        var input: OpaquePointer?
        let opened = snd_input_stdio_open(&input, path, "r")
        guard opened >= 0, let input else {
            snd_config_delete(tree)
            throw ALSAError(device: device, function: "snd_input_stdio_open", code: opened < 0 ? opened : -EIO,
                            message: "cannot read ALSA configuration file '\(path)'", libraryMessage: ALSAError.takeLibraryMessage())
        }
        let loaded = snd_config_load(tree, input)
        snd_input_close(input)
        guard loaded >= 0 else {
            snd_config_delete(tree)
            throw ALSAError(device: device, function: "snd_config_load", code: loaded,
                            message: "ALSA configuration file '\(path)' has a syntax error", libraryMessage: ALSAError.takeLibraryMessage())
        }
        handle = tree
        self.path = path
    }

    deinit { snd_config_delete(handle) }
}
