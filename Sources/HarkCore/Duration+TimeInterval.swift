extension Duration {
    /// The duration in seconds, as a `Double` (Foundation's `TimeInterval`): for `Date` arithmetic, `Thread.sleep`,
    /// rates and printing. Both of `components` count: a duration of a second or more has whole seconds in the
    /// first and only the fraction in the second.
    public var timeInterval: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
