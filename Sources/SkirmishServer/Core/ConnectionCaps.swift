/// The caps on TCP, WebSocket and HTTP connections open at once: in all, per host and per prefix.
///
/// A cap in all alone let 17 hosts of one /24 hold every one of 16,384 connections with a `GET` each, and new
/// players, WebSocket upgrades and `/metrics` were refused for as long as they held them; a cap per prefix makes that
/// take several networks. The tables hold one entry per host and prefix with a connection open, so they are bounded
/// by the cap in all.
package struct ConnectionCaps: Sendable {
    package let limits: ServerConfiguration.ConnectionLimits
    private let ipv4Prefix: Int
    private let ipv6Prefix: Int
    /// Connections open, in all and per host and prefix.
    package private(set) var open = 0
    private var byHost: [SourceHost: Int] = [:]
    private var byPrefix: [SourceHost: Int] = [:]

    package init(_ limits: ServerConfiguration.ConnectionLimits, hosts: ServerConfiguration.HostLimits) {
        self.limits = limits
        ipv4Prefix = hosts.ipv4Prefix
        ipv6Prefix = hosts.ipv6Prefix
    }

    /// Takes a place for a connection from `host` (`nil` when its address is unknown), or says why there is none.
    package mutating func admit(_ host: SourceHost?) -> Rejection? {
        guard open < limits.maxConnections else { return .tooManyConnections }
        if let host {
            let prefix = host.prefix(ipv4: ipv4Prefix, ipv6: ipv6Prefix)
            guard byHost[host, default: 0] < limits.maxConnectionsPerHost else { return .hostConnectionsFull }
            guard byPrefix[prefix, default: 0] < limits.maxConnectionsPerPrefix else { return .prefixConnectionsFull }
            byHost[host, default: 0] += 1
            byPrefix[prefix, default: 0] += 1
        }
        open += 1
        return nil
    }

    /// Gives back the place an admitted connection from `host` held.
    package mutating func release(_ host: SourceHost?) {
        open -= 1
        guard let host else { return }
        byHost.countDown(host)
        byPrefix.countDown(host.prefix(ipv4: ipv4Prefix, ipv6: ipv6Prefix))
    }

    /// Connections open from `host`'s prefix.
    package func connections(ofPrefix host: SourceHost) -> Int {
        byPrefix[host.prefix(ipv4: ipv4Prefix, ipv6: ipv6Prefix), default: 0]
    }
}
