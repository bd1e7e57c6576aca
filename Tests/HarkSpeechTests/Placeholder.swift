// Speech tests; see RoundTripTests.
