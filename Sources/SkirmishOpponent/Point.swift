import SkirmishGames

/// A point or vector on the table, in px.
struct Point: Sendable, Hashable {
    var x: Float
    var y: Float

    static func + (a: Point, b: Point) -> Point { Point(x: a.x + b.x, y: a.y + b.y) }
    static func - (a: Point, b: Point) -> Point { Point(x: a.x - b.x, y: a.y - b.y) }
    static func * (a: Point, k: Float) -> Point { Point(x: a.x * k, y: a.y * k) }

    var length: Float { (x * x + y * y).squareRoot() }

    func dot(_ other: Point) -> Float { x * other.x + y * other.y }

    /// The same direction, at most `limit` long.
    func clamped(toLength limit: Float) -> Point {
        let l = length
        guard l > limit, l > 0 else { return self }
        return self * (max(limit, 0) / l)
    }

    /// The unit vector, or `fallback` for a zero vector.
    func normalised(or fallback: Point) -> Point {
        let l = length
        return l > 0 ? self * (1 / l) : fallback
    }

    /// Confined to the bottom seat's paddle box (the opponent's own half, in its own frame).
    func confined() -> Point {
        let box = PuckConstants.paddleBox(seat: 0)
        return Point(
            x: min(max(x, box.x.lowerBound), box.x.upperBound), y: min(max(y, box.y.lowerBound), box.y.upperBound))
    }

    /// The distance from this point to the segment `a`–`b`.
    func distance(toSegment a: Point, _ b: Point) -> Float {
        let ab = b - a
        let l2 = ab.dot(ab)
        guard l2 > 0 else { return (self - a).length }
        let t = min(max((self - a).dot(ab) / l2, 0), 1)
        return (self - (a + ab * t)).length
    }
}
