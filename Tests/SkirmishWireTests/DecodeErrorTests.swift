import SkirmishTestSupport
import SkirmishWire
import Testing

@Suite struct DecodeErrorTests {
    static let cases: [(String, DecodeError)] = [
        ("", .tooShort),
        ("534e4150 00000000 00", .tooShort),
        ("534e4151 00000000 0064", .badMagic),
        ("534e4150 00000000 0063", .unknownType),
        ("534e4150 00000000 ffff", .unknownType),
        ("534e4150 00000001 0005 | 00000005 0000000b", .badValue), // numbered handshake packet
        ("534e4150 00000000 0005 | 00000005 0000", .truncatedPayload),
        ("534e4150 00000000 0064 | 00", .trailingBytes),
        ("534e4150 00000005 00c8 | 00000004 43200000 43c80000 3f800000 bf800000 00", .trailingBytes),
        ("534e4150 00000005 00c8 | 00000004 7fc00000 43c80000 3f800000 bf800000", .badValue), // NaN x
        ("534e4150 00000005 00c8 | 00000004 43200000 7f800000 3f800000 bf800000", .badValue), // +inf y
        ("534e4150 00000003 0006 | 00000007 00000002 fff0000000000000", .badValue), // -inf send time
        ("534e4150 00000000 0065 | 6372617a79 ff 00", .badString), // invalid UTF-8
        ("534e4150 00000000 0065 | 6372617a79", .truncatedPayload), // no NUL before the end
        ("534e4150 00000000 0065 | " + String(repeating: "61", count: 33) + "00", .tooLarge), // 33-byte name
        ("534e4150 00000001 0066 | 05", .tooLarge), // five seats
        ("534e4150 00000001 0066 | 01 00000007 01 6100", .badValue), // position 1 of 1 player
        ("534e4150 00000002 0068 | 01 00000007 01 34", .badValue), // card 52
        ("534e4150 00000004 006d | 00000007 03 deadbeef", .badValue), // outcome 3
        ("534e4150 00000009 00ca | 000003e8 02 02 03", .badValue), // scorer 2
        ("534e4150 00000001 012c | 0000002a 01 3f000000 3f800001", .badValue), // y above 1
        ("534e4150 00000001 012c | 0000002a 11", .tooLarge), // 17 suns
        ("534e4150 00000003 012e | 00000010 40200000", .badValue), // sun index 16
        ("534e4150 00000004 012f | 01 04 3f800000", .badValue), // owner seat 4
        ("534e4150 00000000 0001 | 0001 00 02", .badValue), // game 0 (any other number is the server's to refuse)
        (
            "534e4150 00000000 0001 | 0001 02 02 00000000 " + String(repeating: "00", count: 24) + " 6200 00",
            .truncatedPayload
        ),
        (
            "534e4150 00000000 0001 | 0001 02 02 00000000 " + String(repeating: "00", count: 24) + " 6200"
                + String(repeating: "00", count: 29) + "01", .badValue
        ), // non-zero padding
        (
            "534e4150 00000000 0001 | 0001 02 02 00000000 " + String(repeating: "00", count: 24) + " 6200"
                + String(repeating: "00", count: 31), .trailingBytes
        ), // padding beyond 64 bytes
    ]

    @Test(arguments: cases)
    func malformedInputYieldsItsTypedError(vector: String, error: DecodeError) {
        #expect(throws: error, "\(vector)") { try Packet.decode(hex(vector)) }
    }

    @Test func oversizeDatagramsAreRefusedBeforeParsing() throws {
        var bytes = try Packet(number: 1, .chat(Chat(text: "hi"))).encoded()
        bytes += [UInt8](repeating: 0, count: WireLimits.maxDatagram)
        #expect(throws: DecodeError.tooLarge) { try Packet.decode(bytes, maxSize: WireLimits.maxDatagram) }
        #expect(throws: DecodeError.trailingBytes) { try Packet.decode(bytes, maxSize: WireLimits.maxFrame) }
    }

    /// A million random and mutated byte strings: every one decodes to a packet or a typed error, every error kind
    /// is reached, and whatever decodes re-encodes to exactly the same bytes (the encoding is canonical).
    @Test(.ownThread) func aMillionRandomAndMutatedInputsNeverTrap() throws {
        var arbitrary = Arbitrary(seed: 0x5EED)
        var seen: [DecodeError: Int] = [:]
        var decoded = 0
        let valid = (0..<512).map { _ in (try? arbitrary.packet().encoded()) ?? [] }
        var scratch = [UInt8]()
        scratch.reserveCapacity(WireLimits.maxDatagram + 64)
        for i in 0..<1_000_000 {
            scratch.removeAll(keepingCapacity: true)
            if i % 8 == 0 {
                for _ in 0..<Int.random(in: 0...80, using: &arbitrary.rng) { scratch.append(arbitrary.u8()) }
                if i % 16 == 0, scratch.count >= 4 {
                    scratch.replaceSubrange(0..<4, with: [0x53, 0x4E, 0x41, 0x50])
                }
            } else {
                scratch.append(contentsOf: valid[Int.random(in: 0..<valid.count, using: &arbitrary.rng)])
                mutate(&scratch, using: &arbitrary)
            }
            let result = Result { () throws(DecodeError) in try Packet.decode(scratch, maxSize: WireLimits.maxDatagram)
            }
            switch result {
            case .success(let packet):
                decoded += 1
                #expect(try packet.encoded() == scratch)
            case .failure(let error):
                seen[error, default: 0] += 1
            }
        }
        #expect(Set(seen.keys) == Set(DecodeError.allCases), "error kinds reached: \(seen)")
        #expect(decoded > 10_000)
    }

    private func mutate(_ bytes: inout [UInt8], using arbitrary: inout Arbitrary) {
        for _ in 0...Int.random(in: 0..<3, using: &arbitrary.rng) {
            switch Int.random(in: 0..<7, using: &arbitrary.rng) {
            case 0 where !bytes.isEmpty: // flip a bit
                let at = Int.random(in: 0..<bytes.count, using: &arbitrary.rng)
                bytes[at] ^= 1 << UInt8.random(in: 0..<8, using: &arbitrary.rng)
            case 1 where !bytes.isEmpty: // truncate
                bytes.removeLast(Int.random(in: 1...bytes.count, using: &arbitrary.rng))
            case 2: // extend
                for _ in 0..<Int.random(in: 1...8, using: &arbitrary.rng) { bytes.append(arbitrary.u8()) }
            case 3 where bytes.count >= 10: // another type code
                let type = MessageType.allCases.randomElement(using: &arbitrary.rng)!.rawValue
                bytes[8] = UInt8(type >> 8)
                bytes[9] = UInt8(type & 0xFF)
            case 4 where !bytes.isEmpty: // set a byte to an edge value
                let at = Int.random(in: 0..<bytes.count, using: &arbitrary.rng)
                bytes[at] = [0x00, 0xFF, 0x7F, 0x80, 0x34, 0x11].randomElement(using: &arbitrary.rng)!
            case 5 where bytes.count > 12: // blow past the datagram limit
                if Int.random(in: 0..<64, using: &arbitrary.rng) == 0 {
                    bytes.append(contentsOf: repeatElement(0, count: WireLimits.maxDatagram))
                }
            default: // leave it valid
                break
            }
        }
    }
}
