import Testing

@Suite struct DDNetPlaceholder {
    @Test func placeholder() { #expect(Bool(true)) }
}
