import Testing
@testable import HarkDevices
