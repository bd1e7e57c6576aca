import Testing
@testable import HarkAppliance
