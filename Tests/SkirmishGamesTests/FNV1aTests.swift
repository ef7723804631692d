import SkirmishGames
import Testing

@Suite struct FNV1aTests {
    @Test(arguments: [("", 0x811C_9DC5 as UInt32), ("a", 0xE40C_292C), ("foobar", 0xBF9C_F968)])
    func publishedVectors(text: String, expected: UInt32) {
        #expect(FNV1a.hash(Array(text.utf8)) == expected)
    }

    @Test func integersAndFloatsAreBigEndianBytes() {
        var h = FNV1a()
        h.add(UInt16(0x0102))
        h.add(UInt32(0x0304_0506))
        h.add(UInt64(0x0708_090A_0B0C_0D0E))
        h.add(Float(bitPattern: 0x0F10_1112))
        #expect(h.value == FNV1a.hash((1...0x12).map { UInt8($0) }))
    }

    @Test func negativeZeroDiffersFromZero() {
        var a = FNV1a()
        a.add(Float(0))
        var b = FNV1a()
        b.add(-Float(0))
        #expect(a.value != b.value)
    }

    @Test func everySingleByteChangeIsDetected() {
        let base: [UInt8] = Array(0..<16)
        let reference = FNV1a.hash(base)
        for index in base.indices {
            for bit in 0..<8 {
                var flipped = base
                flipped[index] ^= 1 << UInt8(bit)
                #expect(FNV1a.hash(flipped) != reference)
            }
        }
    }
}
