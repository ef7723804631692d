/// Which web pages may open the WebSocket endpoint: the browser's `Origin` header against an allow-list.
///
/// A browser sends cookies and reaches loopback for any page it has open, so without this check any site a player
/// visits could open `/ws` and play (or flood) in their name — cross-site WebSocket hijacking. The default admits
/// exactly the page's own origin: an `Origin` whose host and port are the `Host` the request was sent to, which is
/// where the practice page is served from — when that host is an IP address or `localhost`, which no other site can
/// rebind to this server. `serve --allow-origin` adds others. A request with no `Origin` comes from
/// a program, not a page (bots, `websocat`), which could send any header it liked anyway: it is admitted.
public struct OriginPolicy: Sendable, Hashable {
    /// Extra origins admitted, as a browser writes them (`https://example.com:8443`), compared case-insensitively;
    /// `*` admits every origin.
    public var allowed: Set<String>

    /// A policy admitting the page's own origin and the `allowed` ones (`*` for any), normalised for comparison.
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
        let hostHeader = Self.normalised(host)
        // The page's own origin counts only when the server was reached by an address or `localhost`: a DNS name
        // can be rebound to 127.0.0.1 by the site that owns it (DNS rebinding), whose page would then send an
        // `Origin` and `Host` that match. A server reached by name lists its origin with `--allow-origin`.
        return !authority.isEmpty && authority == hostHeader && Self.cannotBeRebound(hostHeader)
    }

    /// Whether `authority` (`host` or `host:port`) names its host by an IP address or as `localhost`.
    static func cannotBeRebound(_ authority: String) -> Bool {
        var host = Substring(authority)
        if host.hasPrefix("[") {
            // [IPv6]:port
            guard let end = host.firstIndex(of: "]") else { return false }
            return host[host.index(after: host.startIndex)..<end].allSatisfy { $0.isHexDigit || $0 == ":" || $0 == "." }
        }
        if let colon = host.lastIndex(of: ":") { host = host[..<colon] }
        if host == "localhost" { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts.allSatisfy { part in part.count <= 3 && !part.isEmpty && UInt8(part) != nil }
    }

    /// Lowercased, without surrounding spaces or a trailing slash.
    static func normalised(_ text: String) -> String {
        var result = Substring(text.lowercased())
        while result.first == " " || result.first == "\t" { result.removeFirst() }
        while result.last == " " || result.last == "\t" || result.last == "/" { result.removeLast() }
        return String(result)
    }
}
