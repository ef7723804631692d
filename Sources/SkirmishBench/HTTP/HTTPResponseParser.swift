/// Reads an HTTP/1.1 response from the bytes received so far (RFC 9112 §6: the body's length comes from
/// `Transfer-Encoding: chunked`, else `Content-Length`, else the connection's close).
package enum HTTPResponseParser {
    /// Why received bytes are not a response (the client wraps it with the URL).
    package struct Malformed: Error, Equatable {
        package var reason: String
    }

    /// The response, or `nil` while more bytes are needed; `atEOF` when the peer has closed (the end of a body
    /// without a length).
    package static func parse(_ bytes: [UInt8], atEOF: Bool) throws(Malformed) -> HTTPResponse? {
        guard let headEnd = find([13, 10, 13, 10], in: bytes, from: 0) else {
            if bytes.count > 65_536 { throw Malformed(reason: "no end of the header within 64 KiB") }
            return nil
        }
        let head = String(decoding: bytes[..<headEnd], as: UTF8.self)
        var lines = head.split(separator: "\r\n", omittingEmptySubsequences: false)[...]
        guard let statusLine = lines.popFirst() else { throw Malformed(reason: "an empty header") }
        let parts = statusLine.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), parts[1].count == 3, let status = Int(parts[1]) else {
            throw Malformed(reason: "the status line `\(statusLine)`")
        }
        var headers: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { throw Malformed(reason: "the header line `\(line)`") }
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].trimmingSpaces
            headers[name] = headers[name].map { $0 + ", " + value } ?? String(value)
        }
        let body = Array(bytes[(headEnd + 4)...])
        if headers["transfer-encoding"]?.lowercased().contains("chunked") == true {
            guard let decoded = try dechunk(body) else { return nil }
            return HTTPResponse(status: status, headers: headers, body: decoded)
        }
        if let field = headers["content-length"] {
            guard let length = Int(field), length >= 0 else { throw Malformed(reason: "Content-Length `\(field)`") }
            guard body.count >= length else { return nil }
            return HTTPResponse(status: status, headers: headers, body: Array(body.prefix(length)))
        }
        // No framing: the body is whatever arrives before the close (204 and 304 have none).
        if status == 204 || status == 304 || (100..<200).contains(status) {
            return HTTPResponse(status: status, headers: headers, body: [])
        }
        return atEOF ? HTTPResponse(status: status, headers: headers, body: body) : nil
    }

    /// The body of a chunked transfer, or `nil` while its last chunk has not arrived.
    private static func dechunk(_ bytes: [UInt8]) throws(Malformed) -> [UInt8]? {
        var body: [UInt8] = []
        var offset = 0
        while true {
            guard let lineEnd = find([13, 10], in: bytes, from: offset) else { return nil }
            let sizeText = String(decoding: bytes[offset..<lineEnd], as: UTF8.self)
            let digits = sizeText.split(separator: ";", maxSplits: 1).first.map { $0.trimmingSpaces } ?? ""
            guard let size = Int(digits, radix: 16), size >= 0 else {
                throw Malformed(reason: "the chunk size `\(sizeText)`")
            }
            let start = lineEnd + 2
            if size == 0 { return body } // trailers, if any, are not needed
            guard bytes.count >= start + size + 2 else { return nil }
            guard bytes[start + size] == 13, bytes[start + size + 1] == 10 else {
                throw Malformed(reason: "a chunk of \(size) bytes not followed by CRLF")
            }
            body += bytes[start..<(start + size)]
            offset = start + size + 2
        }
    }

    private static func find(_ needle: [UInt8], in bytes: [UInt8], from start: Int) -> Int? {
        guard bytes.count >= needle.count, start <= bytes.count - needle.count else { return nil }
        for index in start...(bytes.count - needle.count) where bytes[index] == needle[0] {
            if bytes[index..<(index + needle.count)].elementsEqual(needle) { return index }
        }
        return nil
    }
}

extension Substring {
    package var trimmingSpaces: String {
        var text = self
        while text.first == " " || text.first == "\t" { text = text.dropFirst() }
        while text.last == " " || text.last == "\t" { text = text.dropLast() }
        return String(text)
    }
}
