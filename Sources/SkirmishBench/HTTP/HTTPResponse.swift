/// A complete HTTP/1.1 response: status, headers (names lowercased) and the body, de-chunked.
package struct HTTPResponse: Sendable, Equatable {
    package var status: Int
    package var headers: [String: String]
    package var body: [UInt8]

    package init(status: Int, headers: [String: String], body: [UInt8]) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The body as UTF-8 text.
    package var text: String { String(decoding: body, as: UTF8.self) }
}

/// Why an HTTP request got no usable response; each case names the URL and says what to check.
package enum HTTPClientError: Error, Equatable, CustomStringConvertible {
    /// The connection was refused or could not be made.
    case cannotConnect(url: String, reason: String)
    /// No complete response arrived within the timeout.
    case timedOut(url: String, after: Duration, received: Int)
    /// The peer closed the connection before the response was complete.
    case closedEarly(url: String, received: Int)
    /// The bytes are not an HTTP/1.1 response.
    case malformed(url: String, reason: String)
    /// A response arrived, but not with the status asked for.
    case unexpectedStatus(url: String, status: Int)

    package var description: String {
        switch self {
        case .cannotConnect(let url, let reason):
            "cannot reach \(url): \(reason); is the server running and listening there?"
        case .timedOut(let url, let after, let received):
            "\(url) gave no complete response within \(after) (\(received) bytes received); is the server overloaded?"
        case .closedEarly(let url, let received):
            "\(url) closed the connection after \(received) bytes, before the response was complete"
        case .malformed(let url, let reason):
            "\(url) answered something that is not an HTTP/1.1 response: \(reason)"
        case .unexpectedStatus(let url, let status):
            "\(url) answered status \(status), expected 200; is that the metrics endpoint?"
        }
    }
}
