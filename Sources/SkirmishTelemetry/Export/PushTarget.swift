#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A collector to push to: its URL, the format it takes, how to authenticate.
public struct PushTarget: Sendable, Hashable, CustomStringConvertible {
    public enum Auth: Sendable, Hashable {
        case none
        case bearer(String)
        case basic(user: String, password: String)
    }

    public enum Method: String, Sendable, Hashable {
        case put = "PUT"
        case post = "POST"
    }

    /// The URL as given, credentials removed.
    public var url: String
    public var format: MetricsFormat
    public var auth: Auth
    public var timeoutMilliseconds: Int

    /// Parses `http(s)://[user:password@]host[:port][/path][?query]`; the bearer token comes from
    /// `SKIRMISH_PUSH_TOKEN` when set and the URL carries no credentials.
    public init(parsing text: String, format: MetricsFormat, timeoutMilliseconds: Int = 5_000) throws(PushTargetError) {
        let lower = text.lowercased()
        guard lower.hasPrefix("http://") || lower.hasPrefix("https://") else {
            throw PushTargetError(text: text, problem: "it must start with http:// or https://")
        }
        let schemeEnd = text.index(text.startIndex, offsetBy: lower.hasPrefix("https://") ? 8 : 7)
        var rest = text[schemeEnd...]
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
        var authority = rest[..<authorityEnd]
        rest = rest[authorityEnd...]
        var auth = Auth.none
        if let at = authority.lastIndex(of: "@") {
            let credentials = authority[..<at]
            authority = authority[authority.index(after: at)...]
            let parts = credentials.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            auth = .basic(user: String(parts[0]), password: parts.count > 1 ? String(parts[1]) : "")
        }
        guard !authority.isEmpty, !authority.hasPrefix(":") else {
            throw PushTargetError(text: text, problem: "it has no host")
        }
        if case .none = auth, let token = getenv("SKIRMISH_PUSH_TOKEN").map({ String(cString: $0) }), !token.isEmpty {
            auth = .bearer(token)
        }
        url = String(text[..<schemeEnd]) + String(authority) + String(rest)
        self.format = format
        self.auth = auth
        self.timeoutMilliseconds = timeoutMilliseconds
    }

    /// The URL a push goes to for `run` and `shard`: Pushgateway gets its grouping key, Influx its precision.
    public func endpoint(run: String, shard: String) -> String {
        switch format {
        case .prom:
            let base = url.hasSuffix("/") ? String(url.dropLast()) : url
            if base.contains("/metrics/job/") { return base }
            return base + "/metrics/job/skirmish/run/\(pathSafe(run))/shard/\(pathSafe(shard))"
        case .influx:
            if url.contains("precision=") { return url }
            return url + (url.contains("?") ? "&" : "?") + "precision=ms"
        case .vm, .json, .otlp, .openMetrics:
            return url
        }
    }

    /// Pushgateway replaces the group with PUT; every other collector appends with POST.
    public var method: Method { format == .prom ? .put : .post }

    public var contentType: String {
        switch format {
        case .prom, .vm: "text/plain; version=0.0.4"
        case .openMetrics: "application/openmetrics-text; version=1.0.0; charset=utf-8"
        case .influx: "text/plain; charset=utf-8"
        case .otlp: "application/json"
        case .json: "application/x-ndjson"
        }
    }

    public var description: String { "\(url) (\(format.rawValue))" }

    /// A path segment Pushgateway accepts: `/` would split the grouping key, so it becomes `_`.
    private func pathSafe(_ text: String) -> String {
        String(text.map { $0 == "/" ? "_" : $0 })
    }
}

/// A push URL that cannot be used, with what to write instead.
public struct PushTargetError: Error, Sendable, Hashable, CustomStringConvertible {
    public var text: String
    public var problem: String

    public var description: String {
        "`\(text)` is not a collector URL: \(problem). Example: --push http://127.0.0.1:9091 --format prom"
    }
}
