import HarkCore
import Synchronization

/// The dialog's context per conversation, for clients that name a conversation but do not carry the
/// context themselves: Home Assistant's Wyoming conversation agent opens a new connection for every turn and
/// sends only `context.conversation_id` (homeassistant/components/wyoming/conversation.py), so without this
/// every turn would start a new dialog and a question the dialog asked could never be answered.
/// The least recently used conversation is forgotten beyond `capacity`.
public final class ConversationContexts: Sendable {
    public let capacity: Int
    private let state = Mutex<(contexts: [String: JSONObject], order: [String])>(([:], []))

    public init(capacity: Int = 256) {
        self.capacity = max(1, capacity)
    }

    /// The dialog context after the conversation's last turn, if it is remembered.
    public func context(for conversation: String) -> JSONObject? {
        state.withLock { s in
            guard let context = s.contexts[conversation] else { return nil }
            s.order.removeAll { $0 == conversation }
            s.order.append(conversation)
            return context
        }
    }

    /// Remembers the dialog context after a turn of the conversation.
    public func store(_ context: JSONObject, for conversation: String) {
        state.withLock { s in
            s.contexts[conversation] = context
            s.order.removeAll { $0 == conversation }
            s.order.append(conversation)
            while s.order.count > capacity { s.contexts[s.order.removeFirst()] = nil }
        }
    }

    /// Conversations remembered.
    public var count: Int { state.withLock { $0.contexts.count } }
}
