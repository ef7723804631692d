import Foundation
import Testing

@testable import SkirmishSwarm

/// What `skirmish compare` and `skirmish report` read from their options.
@Suite struct CompareAndReportOptionTests {
    @Test func comparisonOptionsFromTheirWrittenForms() throws {
        let options = try Comparison.Options(
            confidence: "95%", tolerance: "5%", minimumLatencyChange: "0.5ms", resamples: 200)
        #expect(options.confidence == 0.95)
        #expect(options.tolerance == 0.05)
        #expect(abs(options.minimumLatencyChange - 0.000_5) < 1e-12)
        #expect(options.resamples == 200)
        #expect(options.seed == Comparison.Options().seed)
    }

    @Test(
        arguments: [
            ("40%", "10%", "1ms", 1_000, "--confidence 40%: write a percentage from 50% to 99.9%, e.g. 99%"),
            ("100%", "10%", "1ms", 1_000, "--confidence 100%: write a percentage from 50% to 99.9%, e.g. 99%"),
            ("99%", "ten", "1ms", 1_000, "--tolerance ten: write a percentage, e.g. 10%"),
            ("99%", "10%", "soon", 1_000, "--min-latency-change soon: write a duration, e.g. 1ms or 0.5ms"),
            ("99%", "10%", "1ms", 19, "--resamples 19: choose from 20 to 100000 (1000 is plenty)"),
        ])
    func badComparisonOptionsNameTheOptionAndTheFix(
        confidence: String, tolerance: String, latency: String, resamples: Int, message: String
    ) {
        #expect(throws: Comparison.Options.ParseError(description: message)) {
            try Comparison.Options(
                confidence: confidence, tolerance: tolerance, minimumLatencyChange: latency, resamples: resamples)
        }
    }

    @Test func theReportGoesBesideItsSummaryUnlessToldOtherwise() {
        #expect(
            RunOutput.reportFolder(summaryPath: "/data/runs/nightly/summary.json", out: nil) == "/data/runs/nightly")
        #expect(RunOutput.reportFolder(summaryPath: "/data/summary.json", out: "/tmp/report") == "/tmp/report")
        #expect(RunOutput.reportFolder(summaryPath: "/data/summary.json", out: "") == ".")
        let relative = RunOutput.reportFolder(summaryPath: "nightly/summary.json", out: nil)
        #expect(relative == FileManager.default.currentDirectoryPath + "/nightly")
    }
}
