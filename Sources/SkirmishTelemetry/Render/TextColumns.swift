/// Plain-text number formatting and column padding for the tables commands print (benchmarks, ai-eval).

/// Formats a number with a fixed count of decimals, without Foundation.
package func fixed(_ value: Double, _ decimals: Int = 1) -> String {
    guard value.isFinite else { return "\(value)" }
    var scale = 1.0
    for _ in 0..<decimals { scale *= 10 }
    let rounded = (value * scale).rounded() / scale
    var text = "\(rounded)"
    if let dot = text.firstIndex(of: ".") {
        let have = text.distance(from: dot, to: text.endIndex) - 1
        if decimals == 0 {
            text = String(text[..<dot])
        } else if have < decimals {
            text += String(repeating: "0", count: decimals - have)
        }
    }
    return text
}

/// Pads `text` on the left (numbers) or right (names) to `width` columns.
package func pad(_ text: String, _ width: Int, left: Bool = false) -> String {
    let fill = String(repeating: " ", count: max(0, width - text.count))
    return left ? fill + text : text + fill
}
