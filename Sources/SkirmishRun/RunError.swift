/// A part of a command that could not start, named with the option to change: printed as one message, exit status 2.
package enum RunError: Error, CustomStringConvertible {
    /// The `--metrics` address (as given) cannot be listened on.
    case metricsAddress(String, any Error)
    /// Bad input found while starting, with its message.
    case input(String)

    package var description: String {
        switch self {
        case .metricsAddress(let address, let error):
            "--metrics \(address): cannot listen there (\(error)); pick a free port or 127.0.0.1:0"
        case .input(let text):
            text
        }
    }
}
