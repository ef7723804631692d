// libFuzzer entry point for the ENet datagram reader, built by `make fuzz-enet` together with the stdlib-only
// sources of Sources/SkirmishENet/Wire (nothing else of the plug-in is needed, or compiled).
//
// Oracles: reading never traps or reads out of bounds (AddressSanitizer watches), with checksums on and off; every
// command read lies inside the datagram; and every command read re-encodes, with its payload, to a command that
// reads back equal (the writer and the reader agree on every layout of enet/protocol.h).

/// Called by libFuzzer with each generated input (`size` bytes at `data`); returns 0, or traps on a broken oracle.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzENet(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    for checksum in [false, true] {
        guard var reader = try? DatagramReader(bytes, checksum: checksum) else { continue }
        _ = reader.checksumMatches(seed: 0x1234_5678)
        while let command = try? reader.next() {
            guard command.payload.lowerBound >= reader.headerSize, command.payload.upperBound <= bytes.count else {
                fatalError("a command's payload lies outside its datagram: \(command)")
            }
            roundTrip(command, payload: UnsafeRawBufferPointer(rebasing: bytes[command.payload]))
        }
    }
    return 0
}

/// Writes `command` into a datagram of its own and reads it back: it must come back equal, payload included.
private func roundTrip(_ command: DecodedCommand, payload: UnsafeRawBufferPointer) {
    withUnsafeTemporaryAllocation(byteCount: ProtocolLimits.maximumMTU + 8, alignment: 8) { buffer in
        var writer = DatagramWriter(into: buffer, checksum: true)
        guard writer.append(command.header, command.command, payload: payload) else {
            fatalError("a command read from a datagram does not fit an empty one: \(command)")
        }
        let length = writer.finish(peerID: 1, sessionID: 2, sentTime: 3, checksumSeed: 4)
        let datagram = UnsafeRawBufferPointer(rebasing: buffer[0..<length])
        guard var reader = try? DatagramReader(datagram, checksum: true), reader.checksumMatches(seed: 4),
            let again = try? reader.next(), again.header == command.header, again.command == command.command,
            datagram[again.payload].elementsEqual(payload), (try? reader.next()) == .some(nil)
        else { fatalError("a command does not read back as written: \(command)") }
    }
}
