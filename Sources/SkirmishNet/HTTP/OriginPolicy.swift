/// Which web pages may open the WebSocket endpoint: the browser's `Origin` header against an allow-list.
///
/// A browser sends cookies and reaches loopback for any page it has open, so without this check any site a player
/// visits could open `/ws` and play (or flood) in their name — cross-site WebSocket hijacking. The default admits
/// exactly the page's own origin: an `Origin` whose host and port are the `Host` the request was sent to, which is
/// where the practice page is served from. `serve --allow-origin` adds others. A request with no `Origin` comes from
/// a program, not a page (bots, `websocat`), which could send any header it liked anyway: it is admitted.
public struct OriginPolicy: Sendable, Hashable {
    /// Extra origins admitted, as a browser writes them (`https://example.com:8443`), compared case-insensitively;
    /// `*` admits every origin.
    public var allowed: Set<String>

    public init(allowed: some Sequence<String> = []) {
        self.allowed = Set(allowed.map { Self.normalised($0) })
    }

    /// Whether a request with these `Origin` and `Host` headers may upgrade.
    public func admits(origin: String?, host: String?) -> Bool {
        guard let origin else { return true }
        let normalised = Self.normalised(origin)
        if allowed.contains("*") || allowed.contains(normalised) { return true }
        // "null" (sandboxed frames, file: pages) has no host: only an explicit allow-list entry admits it.
        guard let host else { return false }
        let authority: Substring
        if normalised.hasPrefix("http://") {
            authority = normalised.dropFirst("http://".count)
        } else if normalised.hasPrefix("https://") {
            authority = normalised.dropFirst("https://".count)
        } else {
            return false
        }
        return !authority.isEmpty && authority == Self.normalised(host)
    }

    /// Lowercased, without surrounding spaces or a trailing slash.
    static func normalised(_ text: String) -> String {
        var result = Substring(text.lowercased())
        while result.first == " " || result.first == "\t" { result.removeFirst() }
        while result.last == " " || result.last == "\t" || result.last == "/" { result.removeLast() }
        return String(result)
    }
}
