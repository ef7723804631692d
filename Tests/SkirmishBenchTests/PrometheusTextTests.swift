import Testing

@testable import SkirmishBench

@Suite struct PrometheusTextTests {
    /// Exposition text as a Prometheus client writes it: families with HELP and TYPE, labels with escapes,
    /// special values, timestamps and a histogram.
    static let exposition = #"""
        # HELP skirmish_server_packets_sent_total Packets the server sent,\nby type.
        # TYPE skirmish_server_packets_sent_total counter
        skirmish_server_packets_sent_total{type="TableSnapshot",delivery="unreliable"} 1200
        skirmish_server_packets_sent_total{type="Welcome",delivery="reliable"} 4 1700000000000
        skirmish_server_rejected_packets_total{reason="rate_limited"} 7
        skirmish_server_rejected_packets_total{reason="bad_mac"} 2
        skirmish_server_rejected_packets_total{reason="rate_limited_extra"} 100
        # TYPE skirmish_odd gauge
        skirmish_odd{path="C:\\bots",quote="say \"hi\"",multi="a\nb",} NaN
        skirmish_odd{path="up"} +Inf
        skirmish_odd{path="down"} -Inf
        skirmish_server_sessions 12.5
        # TYPE skirmish_rtt_seconds histogram
        skirmish_rtt_seconds_bucket{le="0.005"} 3
        skirmish_rtt_seconds_bucket{le="0.01"} 5
        skirmish_rtt_seconds_bucket{le="+Inf"} 6
        skirmish_rtt_seconds_sum 0.042
        skirmish_rtt_seconds_count 6

        # EOF
        """#

    @Test func readsSamplesLabelsAndFamilies() throws {
        let text = try PrometheusText(parsing: Self.exposition)
        #expect(text.samples.count == 14)
        #expect(text.types["skirmish_server_packets_sent_total"] == "counter")
        #expect(text.types["skirmish_rtt_seconds"] == "histogram")
        #expect(text.help["skirmish_server_packets_sent_total"] == "Packets the server sent,\nby type.")
        #expect(
            text.samples[1]
                == PrometheusSample(
                    name: "skirmish_server_packets_sent_total", labels: ["type": "Welcome", "delivery": "reliable"],
                    value: 4, timestamp: 1_700_000_000_000))
    }

    @Test func unescapesLabelValuesAndReadsSpecialValues() throws {
        let text = try PrometheusText(parsing: Self.exposition)
        let odd = text.samples.filter { $0.name == "skirmish_odd" }
        #expect(odd.count == 3)
        #expect(odd[0].labels == ["path": #"C:\bots"#, "quote": #"say "hi""#, "multi": "a\nb"])
        #expect(odd[0].value.isNaN)
        #expect(odd[1].value == .infinity)
        #expect(odd[2].value == -.infinity)
    }

    @Test func sumsExactNamesAndMatchingLabels() throws {
        let text = try PrometheusText(parsing: Self.exposition)
        #expect(text.sum("skirmish_server_packets_sent_total") == 1_204)
        // `rate_limited_extra` is another label value, not a match (a substring search would have counted it).
        #expect(text.sum("skirmish_server_rejected_packets_total", labels: ["reason": "rate_limited"]) == 7)
        #expect(text.sum("skirmish_server_rejected_packets_total") == 109)
        #expect(text.sum("skirmish_server_sessions") == 12.5)
        #expect(text.sum("skirmish_rtt_seconds_bucket", labels: ["le": "+Inf"]) == 6)
        #expect(text.sum("skirmish_rtt_seconds") == 0)
        #expect(text.sum("skirmish_nothing") == 0)
    }

    @Test func acceptsCRLFLinesAndOpenMetricsExemplars() throws {
        let text = try PrometheusText(
            parsing: "a_total 1\r\nb_total{x=\"y\"} 2 # {trace_id=\"abc\"} 1.0\r\n# EOF\r\n")
        #expect(text.samples.map(\.value) == [1, 2])
    }

    @Test(
        arguments: [
            ("ok 1\n{x=\"y\"} 2", 2, "metric name"),
            ("ok 1\nok 2\nbad{x=\"y\" 3", 3, "closed by `}`"),
            ("bad{x=\"unterminated} 3", 1, "not a closed quoted string"),
            ("bad{x} 3", 1, "has no `=`"),
            ("bad{x=\"1\",x=\"2\"} 3", 1, "appears twice"),
            ("bad twelve", 1, "`twelve` is not a number"),
            ("bad 1 soon", 1, "`soon` is not a timestamp"),
            ("bad 1 2 3", 1, "after the value"),
            ("bad{x=\"1\"}3", 1, "no space"),
            ("# TYPE bad thing", 1, "unknown metric type `thing`"),
            ("# HELP", 1, "without a metric name"),
        ])
    func malformedLinesAreTypedErrorsNamingTheLine(input: String, line: Int, reason: String) {
        do {
            _ = try PrometheusText(parsing: input)
            Issue.record("`\(input)` parsed")
        } catch {
            #expect(error.line == line)
            #expect(error.text == input.split(separator: "\n")[line - 1].description)
            #expect(error.reason.contains(reason), "\(error.reason)")
            #expect(error.description.contains("metrics line \(line)"))
        }
    }
}
