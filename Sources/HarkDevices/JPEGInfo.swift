/// Reads what a JPEG says about itself.
public enum JPEGInfo {
    /// The frame size from the header. Throws when `bytes` is not a JPEG or its header is damaged.
    /// The corresponding C function is `tjDecompressHeader3`.
    public static func read(_ bytes: [UInt8]) throws(CameraError) -> (width: Int, height: Int) {
        try JPEGDecoder().header(bytes)
    }
}
