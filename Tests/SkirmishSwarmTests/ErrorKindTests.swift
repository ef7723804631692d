import SkirmishNet
import SkirmishWire
import Testing

@testable import SkirmishSwarm

/// The `kind` label of `skirmish_errors_total` (issue 19, item 5): a hostile server sends any reason code it likes,
/// and must not mint a new series per invented code.
@Suite struct ErrorKindTests {
    @Test func everyPossibleReasonCodeMapsIntoABoundedLabelSet() {
        var kinds: Set<String> = []
        for code in UInt16.min...UInt16.max {
            kinds.insert(Bot.errorKind(.rejected(RejectReason(rawValue: code))))
            kinds.insert(Bot.errorKind(.remote(DisconnectReason(rawValue: code))))
        }
        // 11 named reject reasons and 8 named disconnect reasons, plus one `unknown` label each.
        #expect(kinds.count == 11 + 8 + 2)
        #expect(kinds.contains("rejected_unknown") && kinds.contains("disconnected_unknown"))
    }

    @Test func namedReasonsKeepTheirOwnLabels() {
        #expect(Bot.errorKind(.rejected(.serverFull)) == "rejected_serverFull")
        #expect(Bot.errorKind(.rejected(.seatInUse)) == "rejected_seatInUse")
        #expect(Bot.errorKind(.remote(.resumedElsewhere)) == "disconnected_resumedElsewhere")
        #expect(Bot.errorKind(.rejected(RejectReason(rawValue: 4_242))) == "rejected_unknown")
    }
}
