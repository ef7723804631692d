/// The rule for player names a server relays to other players (`Hello`, `SignInResponse`).
///
/// A name is shown on other players' screens and logs, so it must not carry characters that change how the text
/// around it is displayed: C0 and C1 control characters (a newline forges a log line, an escape sequence rewrites a
/// terminal) and the invisible bidirectional controls that reorder text (Trojan Source, CVE-2021-42574). The set is
/// closed and small on purpose: letters, marks, digits, punctuation, symbols and ordinary spaces of every script pass.
public enum PlayerName {
    /// Whether `name` may be relayed: no character of ``isRefused(_:)``.
    public static func isAcceptable(_ name: String) -> Bool {
        !name.unicodeScalars.contains(where: isRefused)
    }

    /// The scalars a name may not hold: controls U+0000–U+001F and U+007F–U+009F; the bidirectional marks and
    /// overrides U+061C, U+200E, U+200F, U+202A–U+202E and U+2066–U+2069; the line and paragraph separators U+2028,
    /// U+2029.
    public static func isRefused(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F: true
        case 0x061C, 0x200E, 0x200F, 0x2028, 0x2029: true
        case 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }
}
