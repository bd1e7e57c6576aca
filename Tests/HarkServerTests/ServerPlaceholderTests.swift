import Testing
@testable import HarkServer
