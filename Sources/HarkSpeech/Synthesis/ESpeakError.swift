import CEspeakNG

/// An error from eSpeak NG: the C function, its code and a readable message.
///
/// eSpeak NG has two error vocabularies: the classic API returns `espeak_ERROR` (`espeak_Initialize`
/// returns -1, `EE_INTERNAL_ERROR`, when it cannot start), the `espeak_ng_*` API returns `espeak_ng_STATUS`,
/// which `espeak_ng_GetStatusCodeMessage` describes. Hark calls the `espeak_ng_*` functions wherever both
/// exist, for those messages. `code` holds what the function returned; `message` says what it means.
public struct ESpeakError: Error, CustomStringConvertible, Sendable, Equatable {
    public var function: String
    public var code: Int32
    public var message: String

    public init(function: String, code: Int32, message: String) {
        self.function = function
        self.code = code
        self.message = message
    }

    public var description: String { "\(function) failed (\(code)): \(message)" }

    /// Throws unless `status` is `ENS_OK` (the `espeak_ng_*` functions), with the library's own message.
    /// The corresponding C function is `espeak_ng_GetStatusCodeMessage`.
    static func check(_ status: espeak_ng_STATUS, _ function: String) throws(ESpeakError) {
        guard status != ENS_OK else { return }
        var buffer = [CChar](repeating: 0, count: 512)
        espeak_ng_GetStatusCodeMessage(status, &buffer, buffer.count)
        let message = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        throw ESpeakError(function: function, code: Int32(bitPattern: UInt32(status.rawValue)), message: message)
    }
}
