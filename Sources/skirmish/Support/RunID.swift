import Foundation
import SkirmishScript

/// Run identifiers: `<script>-<UTC time>-<4 hex>`, sortable, unique enough across shards started together, and safe
/// in a path, a Pushgateway grouping key and a label value.
enum RunID {
    static func make(script: String, at date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
        let safe = script.map { $0.isLetter || $0.isNumber || $0 == "-" ? $0 : "-" }
        let suffix = String(UInt16.random(in: 0...UInt16.max), radix: 16)
        return "\(String(safe))-\(formatter.string(from: date))-\(suffix)"
    }
}

/// Human formats for durations and counts in notes.
enum Format {
    static func duration(_ duration: Duration) -> String {
        let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        if seconds < 120 { return "\(Int(seconds.rounded())) s" }
        if seconds < 7_200 { return String(format: "%.1f min", seconds / 60) }
        return String(format: "%.1f h", seconds / 3_600)
    }
}
