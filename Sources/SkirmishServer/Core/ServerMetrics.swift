import SkirmishGames
import SkirmishTelemetry
import SkirmishWire

/// The server's counters as metric series (`skirmish_server_*`), for `GET /metrics` and the exporter.
enum ServerMetrics {
    static func snapshot(
        _ stats: ServerStats, games: GameRegistry = .builtIn, tickDurations: HistogramValue? = nil,
        labels: Labels = Labels(),
        at milliseconds: Int64 = 0, traffic: MatchTraffic? = nil
    ) -> MetricsSnapshot {
        let shard = MetricsShard(constantLabels: labels)
        for reason in Rejection.allCases {
            let id = shard.counter(SkirmishMetrics.serverRejectedPackets, Labels(["reason": reason.label]))
            shard.add(id, stats.rejections(reason))
        }
        // A type exists at 0 only in the direction the protocol allows; a hostile wrong-direction packet still
        // gets its series once it has been counted.
        for type in MessageType.allCases {
            let labels = Labels(["type": type.name])
            let received = stats.packetsReceived[type.index]
            if received > 0 || type.direction.allows(.client) {
                shard.add(shard.counter(SkirmishMetrics.serverPacketsReceived, labels), received)
            }
            let sent = stats.packetsSent[type.index]
            if sent > 0 || type.direction.allows(.server) {
                shard.add(shard.counter(SkirmishMetrics.serverPacketsSent, labels), sent)
            }
        }
        shard.add(shard.counter(SkirmishMetrics.serverBytesReceived, Labels([:])), stats.bytesReceived)
        shard.add(shard.counter(SkirmishMetrics.serverBytesSent, Labels([:])), stats.bytesSent)
        shard.add(shard.counter(SkirmishMetrics.serverChallenges, Labels([:])), stats.challengesSent)
        shard.add(shard.counter(SkirmishMetrics.serverResumes, Labels([:])), stats.resumes)
        shard.add(shard.counter(SkirmishMetrics.serverTicks, Labels([:])), stats.ticks)
        shard.add(shard.counter(SkirmishMetrics.serverLateTicks, Labels([:])), stats.lateTicks)
        shard.add(shard.counter(SkirmishMetrics.serverForfeits, Labels([:])), stats.forfeits)
        // Every registered game's series, by its registered name, from the start (at 0).
        for game in games.games {
            let labels = Labels(["game": game.name])
            let counters = stats.games[game.kind] ?? GameCounters()
            shard.add(shard.counter(SkirmishMetrics.serverMatchesStarted, labels), counters.started)
            shard.add(shard.counter(SkirmishMetrics.serverMatchesCompleted, labels), counters.completed)
            shard.add(shard.counter(SkirmishMetrics.serverMatchesAbandoned, labels), counters.abandoned)
            // Only games whose players' views the server compares (Suns' tallies) can count a desync here.
            if game.kind == .suns || counters.compared > 0 {
                shard.add(shard.counter(SkirmishMetrics.serverDesyncs, labels), counters.desyncs)
                shard.add(shard.counter(SkirmishMetrics.serverUnsettledTallies, labels), counters.unsettled)
            }
        }
        shard.set(shard.gauge(SkirmishMetrics.serverSessions, Labels([:])), Double(stats.sessions))
        shard.set(shard.gauge(SkirmishMetrics.serverDetachedSessions, Labels([:])), Double(stats.detached))
        shard.set(shard.gauge(SkirmishMetrics.serverMatches, Labels([:])), Double(stats.matches))
        var snapshot = shard.snapshot(at: milliseconds)
        if let tickDurations {
            snapshot.insert(
                MetricSeries(
                    family: SkirmishMetrics.serverTickSeconds, labels: labels, value: .histogram(tickDurations)))
        }
        // Every game's series exist from the start (empty), so a dashboard shows 0 samples rather than "No data".
        if let traffic {
            for game in games.games {
                for (direction, sent) in [("sent", true), ("received", false)] {
                    snapshot.insert(
                        MetricSeries(
                            family: SkirmishMetrics.serverMatchBytesPerSecond,
                            labels: labels.appending(Labels([("game", game.name), ("direction", direction)])),
                            value: .histogram(traffic.rates(game.kind, sent: sent))))
                }
            }
        }
        return snapshot
    }

    static func prometheusText(_ snapshot: MetricsSnapshot) -> String {
        String(decoding: MetricsRenderer.render(snapshot, as: .prom), as: UTF8.self)
    }
}
