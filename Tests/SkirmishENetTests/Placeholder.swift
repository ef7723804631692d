import Testing

@Suite struct ENetPlaceholder {
    @Test func placeholder() { #expect(Bool(true)) }
}
