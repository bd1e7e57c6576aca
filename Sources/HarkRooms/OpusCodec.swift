import COpus

/// A libopus failure: the function and its error code, with `opus_strerror`'s text.
public struct OpusError: Error, Sendable, Equatable, CustomStringConvertible {
    public var function: String
    public var code: Int32

    public init(function: String, code: Int32) {
        self.function = function
        self.code = code
    }

    public var description: String { "\(function): \(String(cString: opus_strerror(code))) (\(code))" }

    static func check(_ code: Int32, _ function: String) throws(OpusError) {
        if code != OPUS_OK { throw OpusError(function: function, code: code) }
    }
}

/// A mono Opus encoder for 20 ms frames (`opus_encoder_create`). Not thread-safe: one owner (the mixer thread).
public final class OpusEncoder {
    public let sampleRate: Int
    public var frameSamples: Int { sampleRate / 50 }
    private let handle: OpaquePointer
    private var packet = [UInt8](repeating: 0, count: RoomAudioFrame.maximumPayloadBytes)

    /// - Parameters:
    ///   - sampleRate: 8000, 12000, 16000, 24000 or 48000.
    ///   - bitrate: bits per second (`OPUS_SET_BITRATE`).
    ///   - complexity: 0…10 (`OPUS_SET_COMPLEXITY`). The mixer runs one encoder per listener, so it uses 2:
    ///     on this codec's 16 kHz, 32 kbit/s speech an encode costs about half of complexity 5's and a seventh
    ///     of 10's, and the decoded waveform correlates with the source all the same (0.992, 0.994, 0.999;
    ///     docs/rooms.md).
    ///
    /// `OPUS_APPLICATION_AUDIO`, not `VOIP`: at 16 kHz VOIP picks SILK, a speech model that sounds right but
    /// does not keep the waveform (a flite sentence through two SILK passes correlates 0.90 with its source;
    /// through two passes of this mode, 0.99), and a room carries music and laughter as well as speech. It
    /// is also WebCodecs' default for Opus.
    public init(sampleRate: Int = 16_000, bitrate: Int = 32_000, complexity: Int = 2) throws(OpusError) {
        var error: Int32 = 0
        guard let handle = opus_encoder_create(Int32(sampleRate), 1, OPUS_APPLICATION_AUDIO, &error), error == OPUS_OK else {
            throw OpusError(function: "opus_encoder_create", code: error == OPUS_OK ? OPUS_ALLOC_FAIL : error)
        }
        self.handle = handle
        self.sampleRate = sampleRate
        do throws(OpusError) {
            try OpusError.check(hark_opus_set_bitrate(handle, Int32(bitrate)), "opus_encoder_ctl(OPUS_SET_BITRATE)")
            try OpusError.check(hark_opus_set_complexity(handle, Int32(complexity)), "opus_encoder_ctl(OPUS_SET_COMPLEXITY)")
        } catch {
            opus_encoder_destroy(handle)
            throw error
        }
    }

    deinit { opus_encoder_destroy(handle) }

    /// One packet for exactly `frameSamples` samples (`opus_encode`).
    public func encode(_ pcm: [Int16]) throws(OpusError) -> [UInt8] {
        guard pcm.count == frameSamples else { throw OpusError(function: "opus_encode", code: OPUS_BAD_ARG) }
        let capacity = packet.count
        let count = pcm.withUnsafeBufferPointer { p in
            packet.withUnsafeMutableBufferPointer { out in opus_encode(handle, p.baseAddress!, Int32(frameSamples), out.baseAddress!, Int32(capacity)) }
        }
        if count < 0 { throw OpusError(function: "opus_encode", code: count) }
        return Array(packet[0..<Int(count)])
    }
}

/// A mono Opus decoder (`opus_decoder_create`); decodes packets of any encoder rate at `sampleRate`, and
/// conceals a lost packet from what it has heard (Opus' packet loss concealment). One owner, not thread-safe.
public final class OpusDecoder {
    public let sampleRate: Int
    public var frameSamples: Int { sampleRate / 50 }
    private let handle: OpaquePointer
    private var pcm: [Int16]

    public init(sampleRate: Int = 16_000) throws(OpusError) {
        var error: Int32 = 0
        guard let handle = opus_decoder_create(Int32(sampleRate), 1, &error), error == OPUS_OK else {
            throw OpusError(function: "opus_decoder_create", code: error == OPUS_OK ? OPUS_ALLOC_FAIL : error)
        }
        self.handle = handle
        self.sampleRate = sampleRate
        pcm = [Int16](repeating: 0, count: sampleRate / 50)
    }

    deinit { opus_decoder_destroy(handle) }

    /// 20 ms of audio from `packet` (`opus_decode`).
    public func decode(_ packet: [UInt8]) throws(OpusError) -> [Int16] {
        try run(packet)
    }

    /// 20 ms guessed from the audio before a lost packet (`opus_decode` with no data).
    public func conceal() throws(OpusError) -> [Int16] {
        try run(nil)
    }

    /// The lost packet before `next`, rebuilt from `next`'s in-band FEC (`opus_decode` with `decode_fec` 1);
    /// plain concealment when `next` carries none.
    public func recover(before next: [UInt8]) throws(OpusError) -> [Int16] {
        try run(next, fec: true)
    }

    private func run(_ packet: [UInt8]?, fec: Bool = false) throws(OpusError) -> [Int16] {
        let frame = Int32(frameSamples)
        let count: Int32 = pcm.withUnsafeMutableBufferPointer { out in
            if let packet {
                return packet.withUnsafeBufferPointer { p in opus_decode(handle, p.baseAddress, Int32(p.count), out.baseAddress!, frame, fec ? 1 : 0) }
            }
            return opus_decode(handle, nil, 0, out.baseAddress!, frame, 0)
        }
        if count < 0 { throw OpusError(function: "opus_decode", code: count) }
        if Int(count) != frameSamples { throw OpusError(function: "opus_decode", code: OPUS_INVALID_PACKET) }
        return pcm
    }
}
