import Testing
@testable import HarkDevices

/// The debouncer driven with explicit timestamps: no clocks, no sleeping.
@Suite struct GPIODebouncerTests {
    static func ms(_ value: Int) -> Duration { .milliseconds(value) }

    @Test func aCleanPressIsReportedOnceTheLineIsQuiet() {
        var debouncer = Debouncer(interval: Self.ms(30), state: false)
        #expect(debouncer.settlesAt == nil)
        debouncer.edge(to: true, at: Self.ms(100))
        #expect(debouncer.settlesAt == Self.ms(130))
        #expect(debouncer.next(at: Self.ms(129)) == nil)
        #expect(debouncer.next(at: Self.ms(130)) == .init(edge: .pressed, time: Self.ms(100)))
        #expect(debouncer.state)
        #expect(debouncer.next(at: Self.ms(500)) == nil)
        #expect(debouncer.settlesAt == nil)
    }

    @Test func bounceIsMergedIntoOnePressAtTheFirstEdge() {
        var debouncer = Debouncer(interval: Self.ms(30), state: false)
        for (index, time) in [0, 2, 3, 7, 12].enumerated() {
            debouncer.edge(to: index % 2 == 0, at: Self.ms(time))
        }
        // Quiet is counted from the last edge of the burst, not the first.
        #expect(debouncer.next(at: Self.ms(41)) == nil)
        #expect(debouncer.next(at: Self.ms(42)) == .init(edge: .pressed, time: .zero))
        #expect(debouncer.next(at: Self.ms(1_000)) == nil)
    }

    @Test(arguments: 1...7) func anOddNumberOfBouncesChangesTheStateAndAnEvenOneDoesNot(transitions: Int) {
        var debouncer = Debouncer(interval: Self.ms(20), state: true)
        var level = true
        for step in 0..<transitions {
            level.toggle()
            debouncer.edge(to: level, at: Self.ms(step))
        }
        let change = debouncer.next(at: Self.ms(transitions + 20))
        if transitions.isMultiple(of: 2) {
            #expect(change == nil)
            #expect(debouncer.state)
        } else {
            #expect(change == .init(edge: .released, time: .zero))
            #expect(!debouncer.state)
        }
    }

    @Test func aPressShorterThanTheIntervalIsAGlitchAndYieldsNothing() {
        var debouncer = Debouncer(interval: Self.ms(30), state: false)
        debouncer.edge(to: true, at: Self.ms(10))
        debouncer.edge(to: false, at: Self.ms(25))
        #expect(debouncer.next(at: Self.ms(100)) == nil)
        #expect(!debouncer.state)
        #expect(debouncer.settlesAt == nil)
    }

    @Test func twoPressesAreKeptApartEvenWhenNobodyAskedInBetween() {
        var debouncer = Debouncer(interval: Self.ms(30), state: false)
        debouncer.edge(to: true, at: Self.ms(0))
        debouncer.edge(to: false, at: Self.ms(200))
        debouncer.edge(to: true, at: Self.ms(400))
        #expect(debouncer.next(at: Self.ms(400)) == .init(edge: .pressed, time: Self.ms(0)))
        #expect(debouncer.next(at: Self.ms(400)) == .init(edge: .released, time: Self.ms(200)))
        #expect(debouncer.next(at: Self.ms(400)) == nil)
        #expect(debouncer.next(at: Self.ms(430)) == .init(edge: .pressed, time: Self.ms(400)))
    }

    @Test func theMeasuredLevelOverridesTheLastEdgeRead() {
        // The kernel dropped the final edge: events say pressed, the line reads released.
        var debouncer = Debouncer(interval: Self.ms(30), state: false)
        debouncer.edge(to: true, at: Self.ms(0))
        #expect(debouncer.next(at: Self.ms(30), level: false) == nil)
        #expect(!debouncer.state)
        debouncer.edge(to: false, at: Self.ms(50))
        #expect(debouncer.next(at: Self.ms(80), level: true) == .init(edge: .pressed, time: Self.ms(50)))
    }

    @Test func aZeroOrNegativeIntervalReportsEveryEdge() {
        var debouncer = Debouncer(interval: .milliseconds(-5), state: false)
        #expect(debouncer.interval == .zero)
        debouncer.edge(to: true, at: Self.ms(1))
        debouncer.edge(to: false, at: Self.ms(2))
        #expect(debouncer.next(at: Self.ms(2)) == .init(edge: .pressed, time: Self.ms(1)))
        #expect(debouncer.next(at: Self.ms(2)) == .init(edge: .released, time: Self.ms(2)))
    }
}
