import SkirmishNet
import SkirmishWire
import Testing

/// The `kind` label of `skirmish_errors_total` for SNAP's causes (issue 19, item 5): a hostile server sends any reason
/// code it likes, and must not mint a new series per invented code.
@Suite struct CloseReasonTests {
    @Test func everyPossibleReasonCodeMapsIntoABoundedLabelSet() {
        var kinds: Set<String> = []
        for code in UInt16.min...UInt16.max {
            kinds.insert(SnapConnection.Cause.rejected(RejectReason(rawValue: code)).closeReason.kind)
            kinds.insert(SnapConnection.Cause.remote(DisconnectReason(rawValue: code)).closeReason.kind)
        }
        // 11 named reject reasons and 8 named disconnect reasons, plus one `unknown` label each.
        #expect(kinds.count == 11 + 8 + 2)
        #expect(kinds.contains("rejected_unknown") && kinds.contains("disconnected_unknown"))
    }

    @Test func namedReasonsKeepTheirOwnLabels() {
        #expect(SnapConnection.Cause.rejected(.serverFull).closeReason.kind == "rejected_serverFull")
        #expect(SnapConnection.Cause.rejected(.seatInUse).closeReason.kind == "rejected_seatInUse")
        #expect(SnapConnection.Cause.remote(.resumedElsewhere).closeReason.kind == "disconnected_resumedElsewhere")
        #expect(SnapConnection.Cause.rejected(RejectReason(rawValue: 4_242)).closeReason.kind == "rejected_unknown")
    }

    @Test func outagesAreTheServerOrTheNetworkGoingAwayNotARefusal() {
        #expect(SnapConnection.Cause.silence.closeReason.isOutage)
        #expect(SnapConnection.Cause.serverQuit.closeReason.isOutage)
        #expect(SnapConnection.Cause.remote(.serverShutdown).closeReason.isOutage)
        #expect(SnapConnection.Cause.transportError("reset").closeReason.isOutage)
        #expect(!SnapConnection.Cause.rejected(.serverFull).closeReason.isOutage)
        #expect(!SnapConnection.Cause.handshakeTimeout.closeReason.isOutage)
        #expect(!SnapConnection.Cause.local.closeReason.isOutage)
    }
}
