/// What the server's verify-connect settled for a connection: what ``ENetConnection`` tells the agent once it is
/// connected.
public struct ENetSession: Sendable, Hashable {
    /// The server's id for this peer (the `incomingPeerID` of its `ENetPeer`), carried in every datagram sent to it.
    public var peerID: UInt16
    /// Channels both sides agreed on: the fewer of what this side asked and the server's channel limit.
    public var channelCount: Int
    /// The datagram size both sides use: the smaller of the two MTUs.
    public var mtu: Int
    /// Reliable bytes in flight the server's answer allows.
    public var windowSize: Int
    /// The server's downstream bandwidth, bytes per second (0: unlimited).
    public var serverIncomingBandwidth: UInt32
    /// The server's upstream bandwidth, bytes per second (0: unlimited).
    public var serverOutgoingBandwidth: UInt32
    /// The connect id this side chose and the server echoed (also the checksums' seed).
    public var connectID: UInt32

    /// A session with these values.
    public init(
        peerID: UInt16, channelCount: Int, mtu: Int, windowSize: Int, serverIncomingBandwidth: UInt32,
        serverOutgoingBandwidth: UInt32, connectID: UInt32
    ) {
        self.peerID = peerID
        self.channelCount = channelCount
        self.mtu = mtu
        self.windowSize = windowSize
        self.serverIncomingBandwidth = serverIncomingBandwidth
        self.serverOutgoingBandwidth = serverOutgoingBandwidth
        self.connectID = connectID
    }
}
