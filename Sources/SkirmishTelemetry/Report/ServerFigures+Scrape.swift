import Foundation

/// A server's figures read from its Prometheus `/metrics` page, for runs against an external `--target`.
extension ServerFigures {
    /// Why a scrape gave no figures, for the note the run prints.
    public struct ScrapeError: Error, Sendable, CustomStringConvertible {
        /// What went wrong, with the URL.
        public let description: String
    }

    /// Fetches `url` (a reference server's `/metrics`, on libcurl off the caller's thread) and reads its figures.
    public static func scrape(_ url: String, timeout: Duration = .seconds(5)) -> Result<ServerFigures, ScrapeError> {
        guard let answer = HTTPClient().get(url, timeout: timeout) else {
            return .failure(ScrapeError(description: "\(url): no answer within \(timeout)"))
        }
        guard (200..<300).contains(answer.status) else {
            return .failure(ScrapeError(description: "\(url): HTTP \(answer.status)"))
        }
        guard var figures = ServerFigures(prometheusText: String(decoding: answer.body, as: UTF8.self)) else {
            return .failure(ScrapeError(description: "\(url): no skirmish_server_* series on the page"))
        }
        figures.scrapedFrom = url
        return .success(figures)
    }

    /// The figures in a Prometheus text page, or `nil` when it has no `skirmish_server_ticks_total`.
    ///
    /// Counters and gauges are summed over their series (by label where the figure is a breakdown); the loop time
    /// percentiles (and the per-match bandwidth's) are interpolated inside the page's buckets as Prometheus'
    /// `histogram_quantile` does, since a page carries buckets, not the HDR counts; a mean is `_sum` over `_count`.
    /// The longest tick and the largest bandwidth sample are not on the page and stay unknown.
    public init?(prometheusText text: String) {
        let samples = PrometheusText.samples(text)
        func total(_ family: MetricFamily) -> Double {
            samples.filter { $0.name == family.name }.reduce(0) { $0 + $1.value }
        }
        func breakdown(_ family: MetricFamily, by label: String) -> [String: UInt64] {
            var result: [String: UInt64] = [:]
            for sample in samples where sample.name == family.name && sample.value > 0 {
                result[sample.labels[label] ?? "", default: 0] += UInt64(sample.value)
            }
            return result
        }
        guard samples.contains(where: { $0.name == SkirmishMetrics.serverTicks.name }) else { return nil }
        sessions = total(SkirmishMetrics.serverSessions)
        matches = total(SkirmishMetrics.serverMatches)
        packetsReceived = UInt64(total(SkirmishMetrics.serverPacketsReceived))
        packetsSent = UInt64(total(SkirmishMetrics.serverPacketsSent))
        bytesReceived = UInt64(total(SkirmishMetrics.serverBytesReceived))
        bytesSent = UInt64(total(SkirmishMetrics.serverBytesSent))
        challenges = UInt64(total(SkirmishMetrics.serverChallenges))
        resumes = UInt64(total(SkirmishMetrics.serverResumes))
        ticks = UInt64(total(SkirmishMetrics.serverTicks))
        lateTicks = UInt64(total(SkirmishMetrics.serverLateTicks))
        forfeits = UInt64(total(SkirmishMetrics.serverForfeits))
        let started = breakdown(SkirmishMetrics.serverMatchesStarted, by: "game")
        let completed = breakdown(SkirmishMetrics.serverMatchesCompleted, by: "game")
        let abandoned = breakdown(SkirmishMetrics.serverMatchesAbandoned, by: "game")
        var byGame: [String: [UInt64]] = [:]
        for game in Set(started.keys).union(completed.keys).union(abandoned.keys) {
            byGame[game] = [started[game] ?? 0, completed[game] ?? 0, abandoned[game] ?? 0]
        }
        matchesByGame = byGame
        desyncs = breakdown(SkirmishMetrics.serverDesyncs, by: "game")
        rejections = breakdown(SkirmishMetrics.serverRejectedPackets, by: "reason")
        let cumulative = Self.cumulativeBuckets(samples, SkirmishMetrics.serverTickSeconds)
        tickDurationP50 = Self.interpolatedQuantile(0.5, cumulative)
        tickDurationP99 = Self.interpolatedQuantile(0.99, cumulative)
        tickDurationMax = nil
        var bandwidth: [String: TrafficFigures] = [:]
        let family = SkirmishMetrics.serverMatchBytesPerSecond
        for game in Set(samples.filter { $0.name == family.name + "_count" }.compactMap { $0.labels["game"] }) {
            func rates(_ direction: String) -> RateFigures {
                let only = ["game": game, "direction": direction]
                let count = samples.filter { $0.name == family.name + "_count" && $0.labels.matches(only) }
                    .reduce(0) { $0 + $1.value }
                let sum = samples.filter { $0.name == family.name + "_sum" && $0.labels.matches(only) }
                    .reduce(0) { $0 + $1.value }
                let cumulative = Self.cumulativeBuckets(samples, family, where: only)
                return RateFigures(
                    samples: UInt64(count), mean: count > 0 ? sum / count : nil,
                    p50: Self.interpolatedQuantile(0.5, cumulative), p99: Self.interpolatedQuantile(0.99, cumulative),
                    max: nil)
            }
            let figures = TrafficFigures(sent: rates("sent"), received: rates("received"))
            if figures.sent.samples + figures.received.samples > 0 { bandwidth[game] = figures }
        }
        matchBytesPerSecond = bandwidth
    }

    /// A histogram family's `_bucket` samples on the page (those whose labels include `filter`), summed per `le`
    /// bound and sorted by it: cumulative counts as `histogram_quantile` reads them.
    static func cumulativeBuckets(
        _ samples: [PrometheusText.Sample], _ family: MetricFamily, where filter: [String: String] = [:]
    ) -> [(key: Double, value: Double)] {
        var buckets: [Double: Double] = [:]
        for sample in samples where sample.name == family.name + "_bucket" && sample.labels.matches(filter) {
            guard let bound = sample.labels["le"].flatMap({ $0 == "+Inf" ? Double.infinity : Double($0) }) else {
                continue
            }
            buckets[bound, default: 0] += sample.value
        }
        return buckets.sorted { $0.key < $1.key }
    }

    /// `histogram_quantile` over cumulative `(le, count)` pairs: linear inside the bucket holding the rank.
    static func interpolatedQuantile(_ q: Double, _ cumulative: [(key: Double, value: Double)]) -> Double? {
        guard let total = cumulative.last?.value, total > 0 else { return nil }
        let rank = q * total
        var lowerBound = 0.0
        var lowerCount = 0.0
        for (bound, count) in cumulative {
            if count >= rank {
                guard bound.isFinite else { return lowerBound }
                let width = count - lowerCount
                return width > 0 ? lowerBound + (bound - lowerBound) * (rank - lowerCount) / width : bound
            }
            lowerBound = bound
            lowerCount = count
        }
        return lowerBound
    }
}

extension [String: String] {
    /// Whether every label of `filter` has its value here.
    fileprivate func matches(_ filter: [String: String]) -> Bool {
        filter.allSatisfy { self[$0.key] == $0.value }
    }
}

/// The samples of a Prometheus text exposition page: enough of the format to read a server's figures back.
enum PrometheusText {
    struct Sample {
        var name: String
        var labels: [String: String]
        var value: Double
    }

    /// Every `name{labels} value [timestamp]` line; comments, blank and malformed lines are skipped.
    static func samples(_ text: String) -> [Sample] {
        text.split(whereSeparator: \.isNewline).compactMap { sample(Substring($0)) }
    }

    static func sample(_ line: Substring) -> Sample? {
        let trimmed = line.drop { $0 == " " || $0 == "\t" }
        guard let first = trimmed.first, first != "#" else { return nil }
        let nameEnd = trimmed.firstIndex { $0 == "{" || $0 == " " || $0 == "\t" } ?? trimmed.endIndex
        let name = String(trimmed[..<nameEnd])
        var labels: [String: String] = [:]
        var rest = trimmed[nameEnd...]
        if rest.first == "{" {
            rest = rest.dropFirst()
            while let character = rest.first, character != "}" {
                if character == "," || character == " " {
                    rest = rest.dropFirst()
                    continue
                }
                guard let equals = rest.firstIndex(of: "="), rest[rest.index(after: equals)...].first == "\"" else {
                    return nil
                }
                let key = String(rest[..<equals])
                rest = rest[rest.index(equals, offsetBy: 2)...]
                var value = ""
                var escaped = false
                var closed = false
                while let next = rest.popFirst() {
                    if escaped {
                        value.append(next == "n" ? "\n" : next)
                        escaped = false
                    } else if next == "\\" {
                        escaped = true
                    } else if next == "\"" {
                        closed = true
                        break
                    } else {
                        value.append(next)
                    }
                }
                guard closed else { return nil }
                labels[key] = value
            }
            guard rest.first == "}" else { return nil }
            rest = rest.dropFirst()
        }
        let fields = rest.split(whereSeparator: { $0 == " " || $0 == "\t" })
        guard !name.isEmpty, let text = fields.first else { return nil }
        let value: Double?
        switch text {
        case "+Inf": value = .infinity
        case "-Inf": value = -.infinity
        case "NaN": value = .nan
        default: value = Double(text)
        }
        guard let value else { return nil }
        return Sample(name: name, labels: labels, value: value)
    }
}
