extension OpponentConfiguration {
    /// The skill of each preset on the continuous scale of ``init(skill:)``: easy 0, medium 1/3, hard 2/3, expert 1.
    public static func skill(of difficulty: Opponent.Difficulty) -> Double {
        switch difficulty {
        case .easy: 0
        case .medium: 1.0 / 3
        case .hard: 2.0 / 3
        case .expert: 1
        }
    }

    /// A configuration between the presets: every knob interpolated piecewise-linearly between the two presets of
    /// ``init(difficulty:)`` around `skill` (0 is easy, 1/3 medium, 2/3 hard, 1 expert).
    ///
    /// Built from the presets themselves, so a retuned preset moves the scale with it, and each preset is met
    /// exactly at its own skill. Between two presets every knob moves monotonically from one to the other, so
    /// a higher skill is never slower, noisier or more short-sighted in any knob than a lower one (the prediction
    /// horizon is rounded to whole ticks). Skills outside 0…1 are clamped; a NaN skill is easy.
    public init(skill: Double) {
        let skill = skill.isNaN ? 0 : min(max(skill, 0), 1)
        let presets = Opponent.Difficulty.allCases
        // The segment [lower, upper] that holds `skill`, and how far along it `skill` lies.
        var index = presets.count - 2
        while index > 0, skill < Self.skill(of: presets[index]) { index -= 1 }
        let lower = OpponentConfiguration(difficulty: presets[index])
        let upper = OpponentConfiguration(difficulty: presets[index + 1])
        let start = Self.skill(of: presets[index])
        let end = Self.skill(of: presets[index + 1])
        let t = min(max((skill - start) / (end - start), 0), 1)
        if t == 0 {
            self = lower
            return
        }
        if t == 1 {
            self = upper
            return
        }
        self = lower
        reactionDelay = lower.reactionDelay + (upper.reactionDelay - lower.reactionDelay) * t
        speedCap = lower.speedCap + (upper.speedCap - lower.speedCap) * Float(t)
        aimNoise = lower.aimNoise + (upper.aimNoise - lower.aimNoise) * Float(t)
        let horizon = Double(lower.predictionHorizon) + Double(upper.predictionHorizon - lower.predictionHorizon) * t
        predictionHorizon = Int(horizon.rounded())
        blendTicks = lower.blendTicks + (upper.blendTicks - lower.blendTicks) * Float(t)
    }
}
