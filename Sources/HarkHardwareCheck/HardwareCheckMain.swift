import Foundation

/// `hark-hwcheck`: the hardware lane's checks, run inside the VM (docs/hardware-testing.md).
@main
struct HardwareCheckMain {
    static func main() {
        FileHandle.standardError.write(Data("hark-hwcheck: no checks are built yet (issue 6)\n".utf8))
        exit(1)
    }
}
