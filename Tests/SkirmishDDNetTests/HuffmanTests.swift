import Testing

@testable import SkirmishDDNet

@Suite struct HuffmanTests {
    @Test func roundTrip() {
        #expect(true)
    }
}
