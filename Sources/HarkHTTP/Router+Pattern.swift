extension Router {
    /// A path pattern such as `/api/pictures/{id}`: literal segments match exactly, `{name}` matches any one
    /// non-empty segment and captures it under `name`.
    struct Pattern: Sendable, Equatable, CustomStringConvertible {
        enum Segment: Sendable, Equatable {
            case literal(String)
            case parameter(String)
        }

        let segments: [Segment]
        let description: String

        /// Parses a pattern. Patterns are written in code, so a malformed one is a programming error and stops
        /// the process with a message naming it.
        init(_ text: String) {
            precondition(text.hasPrefix("/"), "route pattern \"\(text)\" must start with /")
            var names = Set<String>()
            segments = text.dropFirst().split(separator: "/", omittingEmptySubsequences: false).map { part in
                if part.hasPrefix("{") && part.hasSuffix("}") && part.count > 2 {
                    let name = String(part.dropFirst().dropLast())
                    precondition(!name.contains("{") && !name.contains("}") && names.insert(name).inserted,
                                 "route pattern \"\(text)\" has a malformed or repeated parameter {\(name)}")
                    return .parameter(name)
                }
                precondition(!part.contains("{") && !part.contains("}"),
                             "route pattern \"\(text)\" has a malformed parameter in \"\(part)\"")
                return .literal(String(part))
            }
            description = text
        }

        /// The captured parameters when `path` matches, nil otherwise.
        func match(_ path: String) -> [String: String]? {
            guard path.hasPrefix("/") else { return nil }
            let parts = path.dropFirst().split(separator: "/", omittingEmptySubsequences: false)
            guard parts.count == segments.count else { return nil }
            var parameters: [String: String] = [:]
            for (segment, part) in zip(segments, parts) {
                switch segment {
                case .literal(let literal):
                    if part != literal { return nil }
                case .parameter(let name):
                    if part.isEmpty { return nil }
                    parameters[name] = String(part)
                }
            }
            return parameters
        }
    }
}
