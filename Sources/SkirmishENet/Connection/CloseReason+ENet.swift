import SkirmishNet

extension CloseReason {
    /// The 32-bit data of the disconnect that ended an ENet connection, when the server sent one (kinds
    /// `closed_by_server` and `refused_by_server`) or this side did (kind `local`).
    ///
    /// ENet's disconnect carries application data (a kick reason, a server-full code); ``ENetConnection`` puts it in
    /// the reason's ``detail`` as `(data N)`, since ``CloseReason`` has no field for it. This reads it back, so an agent
    /// that gets ``ClientEvent/closed(_:)`` can act on the code rather than on text.
    public var enetDisconnectData: UInt32? {
        // The last "(data N)" in the text: the server's own, after this side's when both disconnected.
        let marker = Array("(data ".utf8)
        let bytes = Array(detail.utf8)
        guard bytes.count > marker.count else { return nil }
        for start in stride(from: bytes.count - marker.count, through: 0, by: -1)
        where bytes[start..<(start + marker.count)].elementsEqual(marker) {
            let digits = bytes[(start + marker.count)...].prefix { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
            guard !digits.isEmpty, start + marker.count + digits.count < bytes.count,
                bytes[start + marker.count + digits.count] == UInt8(ascii: ")")
            else { return nil }
            return UInt32(String(decoding: digits, as: UTF8.self))
        }
        return nil
    }
}
