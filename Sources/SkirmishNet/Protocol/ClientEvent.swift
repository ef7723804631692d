/// What a connection tells the bot's agent, in order.
public enum ClientEvent<Connection: ClientProtocol> {
    /// The server accepted the player; what the plug-in wants the agent to know comes with it.
    case established(Connection.Established)
    /// After ``ClientProtocol/resume(now:into:)``: the player's seat is back, with what it missed following.
    case resumed(Connection.Established)
    /// An application message from the server, in the order the protocol delivers it.
    case message(Connection.Message)
    /// The connection ended on its own (not after ``ClientProtocol/close(now:into:)``); nothing follows.
    case closed(CloseReason)
}
