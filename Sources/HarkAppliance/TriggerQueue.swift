import Foundation
import HarkAudio

/// Something that asks the loop to act, from outside its audio: the console, the button, the web, a signal.
public enum Trigger: Sendable, Equatable {
    /// A typed (or web) sentence: a text turn.
    case text(String, source: TurnSource)
    /// Start listening now (Enter on the console, a button press in press mode, a web push-to-talk).
    case listen(source: TurnSource)
    /// The push-to-talk button went down / came up.
    case buttonPressed
    case buttonReleased
    /// A text input source closed (end of a piped console).
    case inputClosed(source: TurnSource)
    /// Show and say a new pairing code for the web page (`/pair` on the console).
    case pair
    /// Say this on the speaker (the web's `POST /api/say`): spoken by the loop, so it never talks over a reply.
    case say(String)
    /// Play this on the speaker (an announcement in someone's own voice), by the loop as `say`.
    case play(PCMBuffer)
    /// An input failed outside the loop (the button's line): logged, and the appliance carries on.
    case failure(String)
    /// Finish the current turn, then stop (SIGINT, SIGTERM).
    case stop
}

/// A thread-safe queue of triggers the loop drains between audio blocks, or waits on when it has no audio.
public final class TriggerQueue: @unchecked Sendable {
    // @unchecked: `items` is only touched with `condition` locked.
    private let condition = NSCondition()
    private var items: [Trigger] = []

    public init() {}

    public func post(_ trigger: Trigger) {
        condition.lock()
        items.append(trigger)
        condition.signal()
        condition.unlock()
    }

    /// Everything queued now, oldest first, without waiting.
    public func drain() -> [Trigger] {
        condition.lock()
        defer { condition.unlock() }
        let all = items
        items.removeAll()
        return all
    }

    /// Waits up to `timeout` seconds for at least one trigger; returns everything queued (maybe nothing).
    public func wait(timeout: Double) -> [Trigger] {
        condition.lock()
        defer { condition.unlock() }
        if items.isEmpty { _ = condition.wait(until: Date(timeIntervalSinceNow: timeout)) }
        let all = items
        items.removeAll()
        return all
    }
}
