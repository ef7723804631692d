import SkirmishDDNet
import SkirmishENet
import SkirmishSwarm

extension Catalogue {
    /// What the `skirmish` command speaks: SNAP with its behaviours (``Catalogue/builtIn``), ENet with `payload` and
    /// `idle`, and DDNet with `runner`, `idle` and `chatter`, so `skirmish swarm` fills an ENet or DDNet server given
    /// with `--target`.
    package static let standard: Catalogue = {
        var catalogue = Catalogue.builtIn
        catalogue.registerDDNet()
        catalogue.registerENet()
        return catalogue
    }()
}
