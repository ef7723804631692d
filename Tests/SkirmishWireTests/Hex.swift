/// Bytes from a hex string with spaces and `|` separators allowed, so vectors can be written field by field.
func hex(_ text: String) -> [UInt8] {
    let digits = text.filter { $0.isHexDigit }
    precondition(digits.count % 2 == 0, "odd number of hex digits in \(text)")
    var bytes: [UInt8] = []
    var index = digits.startIndex
    while index < digits.endIndex {
        let next = digits.index(index, offsetBy: 2)
        bytes.append(UInt8(digits[index..<next], radix: 16)!)
        index = next
    }
    return bytes
}

/// Lower-case hex of `bytes`, for readable failure messages.
func hexString(_ bytes: some Sequence<UInt8>) -> String {
    bytes.map { byte in
        let digits = String(byte, radix: 16)
        return digits.count == 1 ? "0" + digits : digits
    }.joined()
}
