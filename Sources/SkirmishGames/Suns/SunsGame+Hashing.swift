import SkirmishWire

extension SunsGame {
    /// The state hashes of this view.
    public var hashes: SunsHashes {
        var layoutHash = FNV1a()
        addLayout(to: &layoutHash)
        var capturesHash = FNV1a()
        addCaptures(to: &capturesHash)
        var all = FNV1a()
        addLayout(to: &all)
        addCaptures(to: &all)
        return SunsHashes(layout: layoutHash.value, captures: capturesHash.value, combined: all.value)
    }

    private func addLayout(to h: inout FNV1a) {
        guard let layout else { return h.add(UInt8(255)) }
        h.add(UInt8(truncatingIfNeeded: layout.count))
        for sun in layout {
            h.add(sun.x)
            h.add(sun.y)
        }
    }

    private func addCaptures(to h: inout FNV1a) {
        for i in 0..<best[0].count {
            for s in 0..<2 {
                h.add(UInt8(best[s][i] == nil ? 0 : 1))
                h.add(best[s][i] ?? 0)
            }
        }
    }
}
