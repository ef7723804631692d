import SkirmishDDNet
import SkirmishSwarm

extension Catalogue {
    /// What the `skirmish` command speaks: SNAP with its behaviours (``Catalogue/builtIn``), and DDNet with `runner`,
    /// `idle` and `chatter`, so `skirmish swarm` fills a DDNet server given with `--target`.
    package static let standard: Catalogue = {
        var catalogue = Catalogue.builtIn
        catalogue.registerDDNet()
        return catalogue
    }()
}
