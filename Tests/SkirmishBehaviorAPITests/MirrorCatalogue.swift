import SkirmishNet
import SkirmishScript
import SkirmishSwarm

/// The mirror's own persona key, decoded by its registration: `depth: 80` keeps its paddle 80 px up from its goal
/// line.
struct MirrorOptions: Sendable, Hashable {
    /// The farthest up from its goal line the paddle can stand and stay in its own half.
    static let maxDepth = Int(MirrorPlayer.box.y.upperBound - MirrorPlayer.box.y.lowerBound)

    /// Pixels from the goal line towards the centre line.
    var depth: Float = 0
}

extension Catalogue {
    /// The built-in catalogue (SNAP and its behaviours) plus `mirror`, which plays only Puck and owns the persona key
    /// `depth`.
    static func withMirror(tally: MirrorTally) -> Catalogue {
        var catalogue = Catalogue.builtIn
        catalogue.register(
            behavior: "mirror", games: [.puck], keys: ["depth"],
            // It checks its replica and counts its matches, so those series exist at 0 for its personas.
            series: { _ in BehaviorSeries(figures: [.desyncs, .matches]) },
            options: { (options: inout ScriptOptions, _: SnapConnection.Configuration) throws(ScriptError) in
                let depth = try options.integer("depth", in: 0...MirrorOptions.maxDepth) ?? 0
                return OptionValue(MirrorOptions(depth: Float(depth)))
            },
            make: { context in MirrorPlayer(context: &context, tally: tally) })
        return catalogue
    }
}
