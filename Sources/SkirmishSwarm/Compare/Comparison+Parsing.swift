import SkirmishScript
import SkirmishWire

extension Comparison.Options {
    /// A comparison option that cannot be read: the text names the option, the value and what to write instead.
    package struct ParseError: Error, Equatable, CustomStringConvertible {
        package var description: String
    }

    /// Options as `skirmish compare` and `--baseline` take them: percentages (`99%`), a duration (`1ms`) and a
    /// count of resamples.
    package init(
        confidence: String, tolerance: String, minimumLatencyChange: String, resamples: Int
    ) throws(ParseError) {
        self.init()
        guard let confidenceValue = Quantity.percentage(confidence), confidenceValue >= 0.5, confidenceValue < 1 else {
            throw ParseError(description: "--confidence \(confidence): write a percentage from 50% to 99.9%, e.g. 99%")
        }
        guard let toleranceValue = Quantity.percentage(tolerance) else {
            throw ParseError(description: "--tolerance \(tolerance): write a percentage, e.g. 10%")
        }
        guard let latency = Quantity.duration(minimumLatencyChange) else {
            throw ParseError(
                description: "--min-latency-change \(minimumLatencyChange): write a duration, e.g. 1ms or 0.5ms")
        }
        guard (20...100_000).contains(resamples) else {
            throw ParseError(description: "--resamples \(resamples): choose from 20 to 100000 (1000 is plenty)")
        }
        self.confidence = confidenceValue
        self.tolerance = toleranceValue
        self.minimumLatencyChange = latency.seconds
        self.resamples = resamples
    }
}
