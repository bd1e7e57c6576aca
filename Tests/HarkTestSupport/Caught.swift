import Testing

/// The error `body` throws when it is an `E`; otherwise an issue is recorded and the result is nil. This is what
/// `#expect(throws:)` and `#require(throws:)` return from Swift 6.1 on; Debian 13's Swift 6.0.3 (docs/debian13.md)
/// returns nothing from them, so tests that look at the error use this instead.
public func caught<E: Error, R>(_ type: E.Type, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> R) -> E? {
    do {
        let value = try body()
        Issue.record("expected \(E.self) to be thrown; got \(value)", sourceLocation: sourceLocation)
    } catch let error as E {
        return error
    } catch {
        Issue.record("expected \(E.self) to be thrown; got \(Swift.type(of: error)): \(error)", sourceLocation: sourceLocation)
    }
    return nil
}
