/// The V4L2 video nodes on this machine, for `hark devices`.
public enum V4L2Devices {
    /// Every `/dev/video*` node with what it says about itself (`VIDIOC_QUERYCAP`, `VIDIOC_ENUM_FMT`,
    /// `VIDIOC_ENUM_FRAMESIZES`), in numeric order. A node that cannot be opened or queried is listed
    /// with its `problem`. Empty when there are none. Nothing is streamed, so a camera in use elsewhere
    /// still lists.
    public static func list() -> [V4L2DeviceInfo] {
        list(system: LinuxV4L2SystemCalls())
    }

    static func list(system: any V4L2SystemCalls) -> [V4L2DeviceInfo] {
        system.videoDevicePaths().map { path in
            do throws(CameraError) {
                return try V4L2Device(path: path, system: system).describe()
            } catch {
                return V4L2DeviceInfo(path: path, problem: error.message)
            }
        }
    }
}
