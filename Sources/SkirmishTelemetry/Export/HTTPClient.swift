import CCurl

/// One libcurl easy handle, used by one exporter worker thread: a blocking request with a hard timeout.
///
/// Not `Sendable`: a curl handle must not be used from two threads at once. Keeping one handle per target reuses
/// its connection between pushes.
final class HTTPClient {
    /// What became of one request.
    enum Outcome: Equatable {
        /// A 2xx answer.
        case accepted(status: Int)
        /// Anything else: a short reason for counting (`connect`, `timeout`, `http_400`, …) and a detail for people.
        case failed(reason: String, detail: String)
    }

    /// The most of an answer body kept for error messages.
    static let maxBodyBytes = 2_048

    private static let globalInit: CURLcode = skirmish_curl_global_init()

    private let handle: UnsafeMutableRawPointer?

    init() {
        _ = HTTPClient.globalInit
        handle = curl_easy_init()
    }

    deinit {
        if let handle { curl_easy_cleanup(handle) }
    }

    /// Sends `body` and waits for the answer or the timeout.
    func send(
        method: String, url: String, body: [UInt8], contentType: String, auth: PushTarget.Auth, timeout: Duration
    ) -> Outcome {
        guard let handle else { return .failed(reason: "curl_init", detail: "curl_easy_init failed") }
        curl_easy_reset(handle)
        let milliseconds = HTTPClient.milliseconds(timeout)
        _ = skirmish_curl_setopt_long(handle, CURLOPT_NOSIGNAL, 1)
        _ = skirmish_curl_setopt_long(handle, CURLOPT_TIMEOUT_MS, milliseconds)
        _ = skirmish_curl_setopt_long(handle, CURLOPT_CONNECTTIMEOUT_MS, milliseconds)
        _ = skirmish_curl_setopt_string(handle, CURLOPT_URL, url)
        _ = skirmish_curl_setopt_string(handle, CURLOPT_CUSTOMREQUEST, method)

        var headers: UnsafeMutablePointer<curl_slist>?
        headers = curl_slist_append(headers, "Content-Type: \(contentType)")
        // Large bodies would otherwise wait a second for `100 Continue`.
        headers = curl_slist_append(headers, "Expect:")
        switch auth {
        case .none:
            break
        case .bearer(let token):
            headers = curl_slist_append(headers, "Authorization: Bearer \(token)")
        case .basic(let user, let password):
            _ = skirmish_curl_setopt_basic_auth(handle, user, password)
        }
        defer { curl_slist_free_all(headers) }
        _ = skirmish_curl_setopt_slist(handle, CURLOPT_HTTPHEADER, headers)

        let answer = AnswerBuffer(limit: HTTPClient.maxBodyBytes)
        let answerPointer = Unmanaged.passRetained(answer)
        defer { answerPointer.release() }
        _ = skirmish_curl_setopt_write_function(handle, HTTPClient.collectAnswer)
        _ = skirmish_curl_setopt_pointer(handle, CURLOPT_WRITEDATA, answerPointer.toOpaque())

        let code: CURLcode = body.withUnsafeBufferPointer { buffer in
            let base = UnsafeRawPointer(buffer.baseAddress ?? UnsafePointer(bitPattern: 1)!)
            _ = skirmish_curl_setopt_body(handle, base.assumingMemoryBound(to: CChar.self), buffer.count)
            return curl_easy_perform(handle)
        }
        guard code == CURLE_OK else {
            let detail = String(cString: curl_easy_strerror(code))
            return .failed(reason: HTTPClient.reason(for: code), detail: detail)
        }
        let status = skirmish_curl_response_code(handle)
        if (200..<300).contains(status) { return .accepted(status: status) }
        let text = String(decoding: answer.bytes, as: UTF8.self).trimmingWhitespace()
        return .failed(reason: "http_\(status)", detail: "HTTP \(status)" + (text.isEmpty ? "" : ": \(text)"))
    }

    /// A `GET` returning the status and up to `limit` bytes of the body, or `nil` when no answer came.
    ///
    /// For reading collectors back in tests and for readiness checks.
    func get(_ url: String, timeout: Duration = .seconds(5), limit: Int = 64 << 20) -> (status: Int, body: [UInt8])? {
        guard let handle else { return nil }
        curl_easy_reset(handle)
        _ = skirmish_curl_setopt_long(handle, CURLOPT_NOSIGNAL, 1)
        _ = skirmish_curl_setopt_long(handle, CURLOPT_TIMEOUT_MS, HTTPClient.milliseconds(timeout))
        _ = skirmish_curl_setopt_string(handle, CURLOPT_URL, url)
        let answer = AnswerBuffer(limit: limit)
        let answerPointer = Unmanaged.passRetained(answer)
        defer { answerPointer.release() }
        _ = skirmish_curl_setopt_write_function(handle, HTTPClient.collectAnswer)
        _ = skirmish_curl_setopt_pointer(handle, CURLOPT_WRITEDATA, answerPointer.toOpaque())
        guard curl_easy_perform(handle) == CURLE_OK else { return nil }
        return (skirmish_curl_response_code(handle), answer.bytes)
    }

    /// curl's write callback: appends to the ``AnswerBuffer`` behind `user`, up to its limit.
    private static let collectAnswer: skirmish_curl_write_fn = { data, size, count, user in
        let total = size * count
        guard let data, let user else { return total }
        let buffer = Unmanaged<AnswerBuffer>.fromOpaque(user).takeUnretainedValue()
        let room = max(0, buffer.limit - buffer.bytes.count)
        data.withMemoryRebound(to: UInt8.self, capacity: total) {
            buffer.bytes.append(contentsOf: UnsafeBufferPointer(start: $0, count: min(room, total)))
        }
        return total
    }

    static func milliseconds(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        return max(1, Int(seconds) * 1_000 + Int(attoseconds / 1_000_000_000_000_000))
    }

    static func reason(for code: CURLcode) -> String {
        switch code {
        case CURLE_COULDNT_CONNECT: "connect"
        case CURLE_OPERATION_TIMEDOUT: "timeout"
        case CURLE_COULDNT_RESOLVE_HOST: "resolve"
        case CURLE_SEND_ERROR, CURLE_RECV_ERROR, CURLE_GOT_NOTHING: "transfer"
        default: "curl_\(code.rawValue)"
        }
    }
}

/// The answer body, filled by curl's write callback through an opaque pointer.
private final class AnswerBuffer {
    let limit: Int
    var bytes: [UInt8] = []

    init(limit: Int) {
        self.limit = limit
    }
}

extension String {
    fileprivate func trimmingWhitespace() -> String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
            let last = scalars.lastIndex(where: { !$0.properties.isWhitespace })
        else { return "" }
        return String(scalars[first...last])
    }
}
