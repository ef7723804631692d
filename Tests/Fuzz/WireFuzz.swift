// libFuzzer entry point for the packet decoder, built by `make fuzz` together with the SkirmishWire sources.
//
// Oracles: decoding never traps or reads out of bounds (AddressSanitizer watches), and whatever decodes re-encodes
// to exactly the input bytes (the encoding is canonical). The TCP frame decoder is fed the same bytes.

/// Called by libFuzzer with each generated input (`size` bytes at `data`); returns 0, or traps on a broken oracle.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzWire(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    if let packet = try? Packet.decode(bytes, maxSize: WireLimits.maxDatagram) {
        let reencoded = withUnsafeTemporaryAllocation(byteCount: WireLimits.maxFrame, alignment: 8) { buffer in
            (try? packet.encode(into: buffer)).map { Array(UnsafeRawBufferPointer(rebasing: buffer[..<$0])) }
        }
        guard let reencoded, reencoded.elementsEqual(bytes) else {
            fatalError("decoded packet does not re-encode to its input: \(packet)")
        }
    }
    var framing = FrameDecoder(maxFrameSize: 512)
    framing.append(bytes)
    while let frame = try? framing.next() {
        _ = try? Packet.decode(Array(frame))
    }
    return 0
}
