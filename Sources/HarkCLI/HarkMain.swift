import HarkCore

@main
struct HarkMain {
    static func main() {
        print("hark")
    }
}
