import Foundation
import HarkCore

/// `hark-hwcheck`: the hardware lane's checks, run inside the VM against gpio-sim, snd-aloop and vivid
/// (docs/hardware-testing.md). One line per check, `PASS`/`FAIL name (seconds) detail`, then a summary;
/// exit 0 only when every selected check passed, 1 when one failed, 64 for a usage error.
///
///     hark-hwcheck --gpio-sim CONFIGFS_BANK --workspace home.json [--pronunciations FILE] [--only NAME,…] [--list]
@main
struct HardwareCheckMain {
    static let checks: [HardwareCheck] = GPIOChecks.all + AudioChecks.all + CameraChecks.all + [ApplianceCheck.check]

    static let usage = """
        USAGE: hark-hwcheck --gpio-sim DIR --workspace FILE [--pronunciations FILE] [--only NAME[,NAME…]] [--list]
          --gpio-sim DIR        the live gpio-sim bank in configfs (/sys/kernel/config/gpio-sim/hark/gpio-bank0)
          --workspace FILE      the intent workspace the speech checks use (Intents/home.json)
          --pronunciations FILE words cmudict lacks (Models/pronunciations.dict)
          --only NAME,…         run only these checks; a name ending in . selects a group (gpio., alsa.)
          --list                print the checks and what each proves
        """

    static func main() {
        var arguments = Array(CommandLine.arguments.dropFirst())
        var options: [String: String] = [:]
        var list = false
        while !arguments.isEmpty {
            let argument = arguments.removeFirst()
            switch argument {
            case "--list":
                list = true
            case "--gpio-sim", "--workspace", "--pronunciations", "--only":
                guard !arguments.isEmpty else { fail("\(argument) needs a value") }
                options[argument] = arguments.removeFirst()
            case "-h", "--help":
                print(usage)
                exit(0)
            default:
                fail("unknown argument \(argument)")
            }
        }
        if list {
            for check in checks { print("\(check.name.padding(toLength: 16, withPad: " ", startingAt: 0)) \(check.summary)") }
            exit(0)
        }
        var selected = checks
        if let only = options["--only"] {
            let names = only.split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) }
            for name in names where !checks.contains(where: { matches($0.name, name) }) {
                fail("--only: no check named \(name) (checks: \(checks.map(\.name).joined(separator: ", ")))")
            }
            selected = checks.filter { check in names.contains { matches(check.name, $0) } }
        }
        guard let bank = options["--gpio-sim"] else { fail("--gpio-sim DIR is required") }
        guard let workspacePath = options["--workspace"] else { fail("--workspace FILE is required") }

        let context: CheckContext
        do {
            context = CheckContext(
                simulator: try GPIOSimulator(bank: bank),
                workspace: try Workspace.load(from: URL(fileURLWithPath: workspacePath)),
                pronunciations: options["--pronunciations"].map { URL(fileURLWithPath: $0) })
        } catch {
            print("FAIL setup: \(error)")
            print("hark-hwcheck: 0 passed, \(selected.count) failed")
            exit(1)
        }

        var passed = 0
        var failed: [String] = []
        let clock = ContinuousClock()
        for check in selected {
            let start = clock.now
            let outcome: (Bool, String)
            do {
                outcome = (true, try check.run(context))
            } catch {
                outcome = (false, "\(error)")
            }
            let seconds = clock.now - start
            let time = String(format: "%.1f s", seconds.timeInterval)
            print("\(outcome.0 ? "PASS" : "FAIL") \(check.name) (\(time)) \(outcome.1)")
            if outcome.0 { passed += 1 } else { failed.append(check.name) }
        }
        print("hark-hwcheck: \(passed) passed, \(failed.count) failed" + (failed.isEmpty ? "" : " (\(failed.joined(separator: ", ")))"))
        exit(failed.isEmpty ? 0 : 1)
    }

    /// `gpio.output` matches `gpio.output` and the group `gpio.`.
    static func matches(_ check: String, _ name: String) -> Bool {
        name.hasSuffix(".") ? check.hasPrefix(name) : check == name
    }

    static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("hark-hwcheck: \(message)\n\(usage)\n".utf8))
        exit(64)
    }
}
