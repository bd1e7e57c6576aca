import Foundation

/// One problem found in a workspace: where (file and JSON path) and what is wrong.
public struct WorkspaceProblem: Sendable, Equatable, CustomStringConvertible {
    /// A JSON path such as `dialog_nodes[12].conditions` (empty for the document itself).
    public var path: String
    public var message: String

    public init(path: String, message: String) {
        self.path = path
        self.message = message
    }

    public var description: String { path.isEmpty ? message : "\(path): \(message)" }
}

/// Why a workspace could not be loaded. Lists every problem found, each with its JSON path.
public struct WorkspaceError: Error, Sendable, CustomStringConvertible {
    /// The file, or `<memory>` for in-memory documents.
    public var file: String
    public var problems: [WorkspaceProblem]

    public init(file: String, problems: [WorkspaceProblem]) {
        self.file = file
        self.problems = problems
    }

    public var description: String {
        if problems.count == 1 { return "\(file): \(problems[0])" }
        return "\(file): \(problems.count) problems:\n" + problems.map { "  \($0)" }.joined(separator: "\n")
    }
}
