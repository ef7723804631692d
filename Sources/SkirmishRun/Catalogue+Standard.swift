import SkirmishENet
import SkirmishSwarm

extension Catalogue {
    /// What the `skirmish` command speaks: SNAP with its behaviours (``Catalogue/builtIn``).
    package static let standard: Catalogue = .builtIn.registeringENet()
}
