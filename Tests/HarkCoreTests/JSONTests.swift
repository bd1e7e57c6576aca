import Testing
@testable import HarkCore

@Suite struct JSONTests {
    @Test func roundTripKeepsOrderAndIntegers() throws {
        let text = #"{"b":1,"a":[true,null,2.5,"x\n\u00e9"],"c":{}}"#
        let v = try JSONValue.parse(text)
        #expect(v.serialized() == #"{"b":1,"a":[true,null,2.5,"x\né"],"c":{}}"#)
    }

    @Test(arguments: [
        ("{\"a\":1,}", 1, 8),
        ("[1,\n 2,,]", 2, 4),
        ("{\"a\":1,\"a\":2}", 1, 8),
        ("\"abc", 1, 1),
        ("01", 1, 1),
    ])
    func syntaxErrorsNameLineAndColumn(text: String, line: Int, column: Int) {
        do {
            _ = try JSONValue.parse(text)
            Issue.record("expected a syntax error for \(text)")
        } catch {
            #expect(error.line == line)
            #expect(error.column == column)
        }
    }

    @Test func surrogatePairsDecode() throws {
        #expect(try JSONValue.parse(#""\ud83d\ude00""#) == .string("😀"))
    }
}
