import CV4L2

/// What a `/dev/videoN` node says about itself (`VIDIOC_QUERYCAP`, `VIDIOC_ENUM_FMT`,
/// `VIDIOC_ENUM_FRAMESIZES`), for `hark devices` and for choosing a capture format.
public struct V4L2DeviceInfo: Sendable, Equatable {
    /// The device node, `/dev/video0`.
    public var path: String
    /// The device's name (`card`): `Integrated Camera: Integrated C`, `vivid`.
    public var card: String
    /// The kernel driver: `uvcvideo`, `vivid`.
    public var driver: String
    /// Where it is attached: `usb-0000:00:14.0-8`, `platform:vivid-000`.
    public var bus: String
    /// The node's capability bits (`device_caps` when the driver sets `V4L2_CAP_DEVICE_CAPS`, which
    /// matters: a UVC camera's metadata node shares the device's `capabilities` but cannot capture video).
    public var capabilities: UInt32
    /// The pixel formats the node offers for single-planar capture, each with its frame sizes.
    public var formats: [Format]
    /// Why the node could not be queried (`permission denied`), or nil when it could.
    public var problem: String?

    public init(path: String, card: String = "", driver: String = "", bus: String = "", capabilities: UInt32 = 0,
                formats: [Format] = [], problem: String? = nil) {
        self.path = path
        self.card = card
        self.driver = driver
        self.bus = bus
        self.capabilities = capabilities
        self.formats = formats
        self.problem = problem
    }

    /// Whether `V4L2Camera` can use the node: single-planar video capture with streaming I/O.
    public var isCaptureDevice: Bool {
        capabilities & UInt32(V4L2_CAP_VIDEO_CAPTURE) != 0 && capabilities & UInt32(V4L2_CAP_STREAMING) != 0
    }

    /// The capability bits by name: `VIDEO_CAPTURE`, `STREAMING`, `META_CAPTURE`, …
    public var capabilityNames: [String] {
        Self.capabilityBits.filter { capabilities & $0.bit != 0 }.map(\.name)
    }

    private static let capabilityBits: [(bit: UInt32, name: String)] = [
        (UInt32(V4L2_CAP_VIDEO_CAPTURE), "VIDEO_CAPTURE"), (UInt32(V4L2_CAP_VIDEO_CAPTURE_MPLANE), "VIDEO_CAPTURE_MPLANE"),
        (UInt32(V4L2_CAP_VIDEO_OUTPUT), "VIDEO_OUTPUT"), (UInt32(V4L2_CAP_VIDEO_OUTPUT_MPLANE), "VIDEO_OUTPUT_MPLANE"),
        (UInt32(V4L2_CAP_VIDEO_M2M), "VIDEO_M2M"), (UInt32(V4L2_CAP_VIDEO_M2M_MPLANE), "VIDEO_M2M_MPLANE"),
        (UInt32(V4L2_CAP_VIDEO_OVERLAY), "VIDEO_OVERLAY"), (UInt32(V4L2_CAP_VBI_CAPTURE), "VBI_CAPTURE"),
        (UInt32(V4L2_CAP_SDR_CAPTURE), "SDR_CAPTURE"), (UInt32(V4L2_CAP_META_CAPTURE), "META_CAPTURE"),
        (UInt32(V4L2_CAP_TUNER), "TUNER"), (UInt32(V4L2_CAP_AUDIO), "AUDIO"), (UInt32(V4L2_CAP_RADIO), "RADIO"),
        (UInt32(V4L2_CAP_TOUCH), "TOUCH"), (UInt32(V4L2_CAP_READWRITE), "READWRITE"),
        (UInt32(V4L2_CAP_STREAMING), "STREAMING"), (UInt32(V4L2_CAP_EXT_PIX_FORMAT), "EXT_PIX_FORMAT"),
        (UInt32(V4L2_CAP_IO_MC), "IO_MC"),
    ]

    /// One pixel format and the frame sizes the driver lists for it.
    public struct Format: Sendable, Equatable {
        public var pixelFormat: V4L2PixelFormat
        /// The driver's description: `YUYV 4:2:2`, `Motion-JPEG`.
        public var description: String
        /// Discrete sizes, in the driver's order (empty when the driver gives a range or nothing).
        public var sizes: [FrameSize]
        /// A stepwise or continuous range (nil when the driver lists discrete sizes or nothing).
        public var sizeRange: SizeRange?

        public init(pixelFormat: V4L2PixelFormat, description: String, sizes: [FrameSize] = [], sizeRange: SizeRange? = nil) {
            self.pixelFormat = pixelFormat
            self.description = description
            self.sizes = sizes
            self.sizeRange = sizeRange
        }

        /// Whether the driver says it can deliver exactly `width × height`.
        public func offers(width: Int, height: Int) -> Bool {
            sizes.contains(FrameSize(width: width, height: height)) || sizeRange?.contains(width: width, height: height) == true
        }
    }

    /// One frame size.
    public struct FrameSize: Sendable, Hashable, CustomStringConvertible {
        public var width: Int
        public var height: Int

        public init(width: Int, height: Int) {
            self.width = width
            self.height = height
        }

        public var description: String { "\(width)×\(height)" }
    }

    /// Frame sizes from a minimum to a maximum in steps (`V4L2_FRMSIZE_TYPE_STEPWISE`; a step of 1 is
    /// `V4L2_FRMSIZE_TYPE_CONTINUOUS`).
    public struct SizeRange: Sendable, Equatable, CustomStringConvertible {
        public var minimum: FrameSize
        public var maximum: FrameSize
        public var step: FrameSize

        public init(minimum: FrameSize, maximum: FrameSize, step: FrameSize) {
            self.minimum = minimum
            self.maximum = maximum
            self.step = step
        }

        public func contains(width: Int, height: Int) -> Bool {
            func within(_ value: Int, _ low: Int, _ high: Int, _ step: Int) -> Bool {
                (low...max(low, high)).contains(value) && (value - low) % max(step, 1) == 0
            }
            return within(width, minimum.width, maximum.width, step.width)
                && within(height, minimum.height, maximum.height, step.height)
        }

        public var description: String { "\(minimum)…\(maximum) in steps of \(step)" }
    }
}
