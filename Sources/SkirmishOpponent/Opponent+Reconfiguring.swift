extension Opponent {
    /// Plays on with `configuration` from the next ``decide(now:)``: how adaptive difficulty changes the opponent's
    /// skill within a match.
    ///
    /// Safe at any moment, mid-plan included. What the opponent has observed (snapshots, round trips, its own
    /// inputs, what it has read of the rival) is kept, and so is a block or strike in progress: the next decision
    /// plans with the new reaction delay and horizon and moves at the new speed cap from where the paddle is, so the
    /// paddle never jumps. The aim and positioning errors already drawn keep their direction and take the new
    /// noise's size, so a worse aim shows at once rather than at the next strike.
    public mutating func reconfigure(_ configuration: OpponentConfiguration) {
        let old = self.configuration.aimNoise
        if old > 0 {
            let scale = configuration.aimNoise / old
            aimOffset *= scale
            positionOffset *= scale
        }
        self.configuration = configuration
    }
}
