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
