import Foundation
import HarkCore
import Testing

@testable import HarkAppliance

/// The intent events print confidences with `TurnRunner.twoDecimals` (a rejection's reason is
/// `SpokenCommand.rejectionReason`'s, to three decimals), which must read exactly as "%.2f" would, ties and negative
/// numbers included.
struct TwoDecimalsTests {
    @Test func agreesWithPrintfOnAGridAndOnRandomValues() {
        var values: [Double] = [0, -0.0, 0.005, 0.015, 0.125, 0.375, 2.675, 1.005, -0.004, -0.005, -2.5, 99.995, 1e12 + 0.125]
        for i in -20_000...20_000 { values.append(Double(i) / 10_000) }
        var generator = SplitMix64(seed: 20261204)
        for _ in 0..<20_000 { values.append(Double.random(in: -1_000...1_000, using: &generator)) }
        let wrong = values.filter { TurnRunner.twoDecimals($0) != String(format: "%.2f", $0) }
        #expect(wrong.isEmpty, "differs from %.2f for \(wrong.prefix(5).map { "\($0)" })")
    }

    @Test func nonFiniteValuesReadAsPrintfWritesThem() {
        for x in [Double.infinity, -Double.infinity, Double.nan, 1e300] {
            #expect(TurnRunner.twoDecimals(x) == String(format: "%.2f", x))
        }
    }
}
