import Foundation
import HarkCore

/// What every check may need: the simulated GPIO chip, the workspace and the pronunciations, the ALSA
/// loopback's device names. Built once from the command line.
struct CheckContext {
    /// The gpio-sim bank the VM's /init configured (its configfs directory).
    let simulator: GPIOSimulator
    let workspace: Workspace
    /// `Models/pronunciations.dict`: words cmudict lacks, as `hark` uses it.
    let pronunciations: URL?

    /// snd-aloop, loaded with `id=Loopback`: what is played on device 0 substream N is captured on device 1
    /// substream N.
    static let loopbackPlayback = "hw:Loopback,0,0"
    static let loopbackCapture = "hw:Loopback,1,0"
    /// A second substream pair, for the appliance's replies, so they never reach its own microphone.
    static let loopbackReplies = "hw:Loopback,0,1"
}
