/// A benchmark that cannot produce a trustworthy figure, or could not run: the text says what and why.
package struct BenchError: Error, CustomStringConvertible, Equatable {
    package var description: String
    package init(_ description: String) { self.description = description }
}
