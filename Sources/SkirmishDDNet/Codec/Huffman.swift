/// The static Huffman code Teeworlds compresses packets with (`NET_PACKETFLAG_COMPRESSION`).
///
/// The tree is built once from a fixed table of byte frequencies (`src/engine/shared/huffman.cpp`,
/// `CHuffman::ms_aFreqTable`) exactly as `CHuffman::ConstructTree` builds it — a stable sort by falling frequency,
/// then the two rarest nodes joined, the rarest on the 0 branch — because the code is only interoperable if every
/// tie breaks the same way. Bits go least significant first; symbol 256 ends the stream.
///
/// Decoding is strict: running out of bits before the end-of-stream symbol, or producing more than the output holds,
/// is an error (the reference decoder reads zero bits past the end; every stream a real peer writes ends with the
/// symbol, so the difference only shows on damaged input).
enum Huffman {
    /// Symbol 256, the end of a stream (`HUFFMAN_EOF_SYMBOL`).
    static let endOfStream = 256

    /// The frequency of each byte value in typical traffic, and 1 for the end of stream.
    static let frequencies: [UInt32] = [
        1 << 30, 4545, 2657, 431, 1950, 919, 444, 482, 2244, 617, 838, 542, 715, 1814, 304, 240, 754, 212, 647, 186,
        283, 131, 146, 166, 543, 164, 167, 136, 179, 859, 363, 113, 157, 154, 204, 108, 137, 180, 202, 176,
        872, 404, 168, 134, 151, 111, 113, 109, 120, 126, 129, 100, 41, 20, 16, 22, 18, 18, 17, 19,
        16, 37, 13, 21, 362, 166, 99, 78, 95, 88, 81, 70, 83, 284, 91, 187, 77, 68, 52, 68,
        59, 66, 61, 638, 71, 157, 50, 46, 69, 43, 11, 24, 13, 19, 10, 12, 12, 20, 14, 9,
        20, 20, 10, 10, 15, 15, 12, 12, 7, 19, 15, 14, 13, 18, 35, 19, 17, 14, 8, 5,
        15, 17, 9, 15, 14, 18, 8, 10, 2173, 134, 157, 68, 188, 60, 170, 60, 194, 62, 175, 71,
        148, 67, 167, 78, 211, 67, 156, 69, 1674, 90, 174, 53, 147, 89, 181, 51, 174, 63, 163, 80,
        167, 94, 128, 122, 223, 153, 218, 77, 200, 110, 190, 73, 174, 69, 145, 66, 277, 143, 141, 60,
        136, 53, 180, 57, 142, 57, 158, 61, 166, 112, 152, 92, 26, 22, 21, 28, 20, 26, 30, 21,
        32, 27, 20, 17, 23, 21, 30, 22, 22, 21, 27, 25, 17, 27, 23, 18, 39, 26, 15, 21,
        12, 18, 18, 27, 20, 18, 15, 19, 11, 17, 33, 12, 18, 15, 19, 18, 16, 26, 17, 18,
        9, 10, 25, 22, 22, 17, 20, 16, 6, 16, 15, 20, 14, 18, 24, 335,
        1, // the end of stream: the table says 1517, `ConstructTree` uses 1
    ]

    /// The code, built on first use (a `static let` is initialised once, thread-safely).
    static let code = Code(frequencies: frequencies)

    /// The tree and each symbol's bits.
    struct Code: Sendable {
        /// Children of node `n` (leaves are 0...256, inner nodes follow): `zero[n]`, `one[n]`; -1 for a leaf.
        let zero: [Int16]
        let one: [Int16]
        let root: Int
        /// Each symbol's bits, first bit in the least significant position, and their count.
        let bits: [UInt32]
        let lengths: [UInt8]

        init(frequencies: [UInt32]) {
            let symbols = frequencies.count
            var zero = [Int16](repeating: -1, count: 2 * symbols)
            var one = [Int16](repeating: -1, count: 2 * symbols)
            // (node, frequency) of the nodes still to join; kept sorted by falling frequency, stably.
            var left = (0..<symbols).map { (node: $0, frequency: UInt64(frequencies[$0])) }
            var next = symbols
            while left.count > 1 {
                Self.stableSortDescending(&left)
                let last = left.removeLast()
                zero[next] = Int16(last.node)
                one[next] = Int16(left[left.count - 1].node)
                left[left.count - 1] = (next, left[left.count - 1].frequency + last.frequency)
                next += 1
            }
            root = next - 1
            var bits = [UInt32](repeating: 0, count: symbols)
            var lengths = [UInt8](repeating: 0, count: symbols)
            // Depth-first from the root; a path is at most `symbols` deep, so an explicit stack is bounded.
            var stack: [(node: Int, bits: UInt32, depth: UInt8)] = [(root, 0, 0)]
            while let (node, path, depth) = stack.popLast() {
                if zero[node] < 0 {
                    bits[node] = path
                    lengths[node] = depth
                    continue
                }
                stack.append((Int(one[node]), path | (1 << UInt32(depth)), depth + 1))
                stack.append((Int(zero[node]), path, depth + 1))
            }
            self.zero = zero
            self.one = one
            self.bits = bits
            self.lengths = lengths
        }

        /// Insertion sort, stable like `std::stable_sort`: between two joins only one entry moved, so it is cheap.
        private static func stableSortDescending(_ nodes: inout [(node: Int, frequency: UInt64)]) {
            guard nodes.count > 1 else { return }
            for index in 1..<nodes.count {
                let item = nodes[index]
                var position = index
                while position > 0 && nodes[position - 1].frequency < item.frequency {
                    nodes[position] = nodes[position - 1]
                    position -= 1
                }
                nodes[position] = item
            }
        }
    }

    /// Compresses `input` into `output`; returns the byte count, or `nil` when it does not fit.
    static func compress(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) -> Int? {
        let code = Self.code
        var accumulator: UInt64 = 0
        var pending: UInt64 = 0
        var count = 0
        func emit(_ symbol: Int) -> Bool {
            accumulator |= UInt64(code.bits[symbol]) << pending
            pending += UInt64(code.lengths[symbol])
            while pending >= 8 {
                guard count < output.count else { return false }
                output[count] = UInt8(truncatingIfNeeded: accumulator)
                count += 1
                accumulator >>= 8
                pending -= 8
            }
            return true
        }
        for byte in input {
            guard emit(Int(byte)) else { return nil }
        }
        guard emit(endOfStream), count < output.count else { return nil }
        // The last, partial byte is always written, even when empty, as `CHuffman::Compress` does.
        output[count] = UInt8(truncatingIfNeeded: accumulator)
        return count + 1
    }

    /// Decompresses `input` into `output`; returns the byte count.
    static func decompress(
        _ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer
    ) throws(DecodeError) -> Int {
        let code = Self.code
        var count = 0
        var node = code.root
        for byte in input {
            for bit in 0..<8 {
                node = Int((byte >> UInt8(bit)) & 1 == 0 ? code.zero[node] : code.one[node])
                guard code.zero[node] < 0 else { continue }
                if node == endOfStream { return count }
                guard count < output.count else { throw .badHuffman }
                output[count] = UInt8(node)
                count += 1
                node = code.root
            }
        }
        throw .badHuffman
    }
}
