import Foundation
import SkirmishWire

/// Parsers for the quantities scripts are written in: durations (`30s`, `5m`, `250ms`), rates (`30hz`, `50/s`),
/// percentages (`1%`) and ranges (`2s..5s`). Each returns `nil` on anything it does not recognise; the caller turns
/// that into a located `ScriptError` with a hint.
public enum Quantity {
    /// `250ms`, `1.5s`, `30s`, `5m`, `2h`. No negative values; no bare numbers (the unit is never guessed).
    public static func duration(_ text: String) -> Duration? {
        let text = text.trimmed
        // Milliseconds divide rather than multiply by 0.001, so `120ms` is exactly the Double nearest 0.12 s.
        let units: [(String, Double, Double)] = [("ms", 1, 1_000), ("s", 1, 1), ("m", 60, 1), ("h", 3_600, 1)]
        for (unit, multiplier, divisor) in units where text.hasSuffix(unit) {
            let number = String(text.dropLast(unit.count))
            guard let value = Double(number), value.isFinite, value >= 0, !number.hasPrefix("+") else { return nil }
            let total = value * multiplier / divisor
            guard total <= 366 * 86_400 else { return nil }
            return .nanoseconds(Int64((value * multiplier * 1e9 / divisor).rounded()))
        }
        return nil
    }

    /// Events per second from `30hz`, `30/s`, `1800/m` or `2/h`.
    public static func rate(_ text: String) -> Double? {
        let text = text.trimmed.lowercased()
        let forms: [(String, Double)] = [("hz", 1), ("/s", 1), ("/m", 1.0 / 60), ("/h", 1.0 / 3_600)]
        for (suffix, perSecond) in forms where text.hasSuffix(suffix) {
            guard let value = Double(text.dropLast(suffix.count)), value.isFinite, value >= 0 else { return nil }
            return value * perSecond
        }
        return nil
    }

    /// A fraction in [0, 1] from `1%` or `0.5%`.
    public static func percentage(_ text: String) -> Double? {
        let text = text.trimmed
        guard text.hasSuffix("%"), let value = Double(text.dropLast()), value.isFinite, (0...100).contains(value)
        else { return nil }
        return value / 100
    }

    /// `2s..5s` (inclusive), or a single duration meaning a range of one value.
    public static func durationRange(_ text: String) -> ClosedRange<Duration>? {
        let parts = text.components(separatedBy: "..")
        switch parts.count {
        case 1:
            return duration(parts[0]).map { $0...$0 }
        case 2:
            guard let low = duration(parts[0]), let high = duration(parts[1]), low <= high else { return nil }
            return low...high
        default:
            return nil
        }
    }
}

extension String {
    package var trimmed: String { trimmingCharacters(in: .whitespaces) }
}

extension Duration {
    /// The way scripts write it: `250ms`, `30s`, `5m`, `1.5h`.
    package var scriptText: String {
        let s = seconds
        func trim(_ value: Double) -> String {
            let rounded = (value * 1_000).rounded() / 1_000
            return rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)
        }
        if s < 1, s > 0 { return trim(s * 1_000) + "ms" }
        if s < 120 { return trim(s) + "s" }
        if s < 7_200 { return trim(s / 60) + "m" }
        return trim(s / 3_600) + "h"
    }
}
