import CCurl

/// One reusable libcurl handle: sends a body to a URL and reports the status and the start of the answer.
///
/// Used only on the exporter's own thread (libcurl blocks), never on an event loop. Not `Sendable`.
final class CurlPoster {
    struct Response {
        var status: Int
        var body: String
    }

    struct Failure: Error, CustomStringConvertible {
        var reason: String
        var description: String { reason }
    }

    private let handle: UnsafeMutableRawPointer?
    private let collected = ResponseBuffer()

    /// libcurl's global state, initialised once per process before the first handle (3 = CURL_GLOBAL_DEFAULT, a
    /// macro Swift cannot import).
    private static let globalInit: Void = { _ = curl_global_init(3) }()

    init() {
        _ = Self.globalInit
        handle = curl_easy_init()
    }

    deinit {
        if let handle { curl_easy_cleanup(handle) }
    }

    func send(_ body: [UInt8], to target: PushTarget, url: String) throws(Failure) -> Response {
        guard let handle else { throw Failure(reason: "curl_easy_init failed") }
        curl_easy_reset(handle)
        collected.bytes.removeAll(keepingCapacity: true)
        var headers: UnsafeMutablePointer<curl_slist>?
        headers = curl_slist_append(headers, "Content-Type: \(target.contentType)")
        headers = curl_slist_append(headers, "Expect:")
        if case .bearer(let token) = target.auth {
            headers = curl_slist_append(headers, "Authorization: Bearer \(token)")
        }
        defer { curl_slist_free_all(headers) }
        _ = skirmish_curl_set_string(handle, CURLOPT_URL, url)
        _ = skirmish_curl_set_string(handle, CURLOPT_CUSTOMREQUEST, target.method.rawValue)
        _ = skirmish_curl_set_pointer(handle, CURLOPT_HTTPHEADER, UnsafeMutableRawPointer(headers))
        _ = skirmish_curl_set_long(handle, CURLOPT_NOSIGNAL, 1)
        _ = skirmish_curl_set_long(handle, CURLOPT_TIMEOUT_MS, target.timeoutMilliseconds)
        _ = skirmish_curl_set_long(handle, CURLOPT_CONNECTTIMEOUT_MS, min(target.timeoutMilliseconds, 2_000))
        _ = skirmish_curl_set_string(handle, CURLOPT_USERAGENT, "skirmish-exporter")
        if case .basic(let user, let password) = target.auth {
            _ = skirmish_curl_set_long(handle, CURLOPT_HTTPAUTH, 1) // CURLAUTH_BASIC
            _ = skirmish_curl_set_string(handle, CURLOPT_USERNAME, user)
            _ = skirmish_curl_set_string(handle, CURLOPT_PASSWORD, password)
        }
        _ = skirmish_curl_set_write_function(handle) { data, size, count, context in
            guard let data, let context else { return 0 }
            let buffer = Unmanaged<ResponseBuffer>.fromOpaque(context).takeUnretainedValue()
            let length = size * count
            // Keep the first 4 KiB of an answer: enough to report a collector's error, bounded whatever it sends.
            if buffer.bytes.count < 4_096 {
                let keep = min(length, 4_096 - buffer.bytes.count)
                data.withMemoryRebound(to: UInt8.self, capacity: keep) { pointer in
                    buffer.bytes.append(contentsOf: UnsafeBufferPointer(start: pointer, count: keep))
                }
            }
            return length
        }
        _ = skirmish_curl_set_pointer(handle, CURLOPT_WRITEDATA, Unmanaged.passUnretained(collected).toOpaque())
        let code: CURLcode = body.withUnsafeBufferPointer { bytes in
            _ = skirmish_curl_set_long(handle, CURLOPT_POSTFIELDSIZE, bytes.count)
            _ = skirmish_curl_set_pointer(
                handle, CURLOPT_POSTFIELDS, UnsafeMutableRawPointer(mutating: bytes.baseAddress))
            return curl_easy_perform(handle)
        }
        guard code == CURLE_OK else { throw Failure(reason: String(cString: curl_easy_strerror(code))) }
        var status = 0
        _ = skirmish_curl_get_response_code(handle, &status)
        return Response(status: status, body: String(decoding: collected.bytes, as: UTF8.self))
    }
}

/// The answer's bytes, appended to by libcurl's write callback.
private final class ResponseBuffer {
    var bytes: [UInt8] = []
}
