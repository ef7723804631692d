import Foundation

/// The labelled byte vectors of a DocC article, read from the article itself so that a test fails when the article
/// and the code disagree.
///
/// A vector is a fenced code block whose first line is `vector: <label>`. Every other line holds hex digits in groups
/// separated by spaces (the bytes, in order) or a `key: value` field; anything after a `#` is a comment:
///
/// ```
/// vector: packet.ping
/// 534e4150 00000003 0006        # header: number 3, type 0x0006
/// 00000007 00000002 3ff8000000000000
/// fnv1a: 0x12345678
/// ```
package struct ArticleVectors: Sendable {
    /// One labelled block.
    package struct Vector: Sendable, Hashable {
        /// The label after `vector:`.
        package var label: String
        /// The bytes of every hex line, in order.
        package var bytes: [UInt8]
        /// The `key: value` lines.
        package var fields: [String: String]
        /// The line of the article the block starts on, for failure messages.
        package var line: Int
    }

    /// Why an article's vectors cannot be read.
    package struct Problem: Error, CustomStringConvertible {
        /// Which line is wrong and how.
        package var description: String

        /// A problem described by `description`.
        package init(description: String) { self.description = description }
    }

    /// The vectors, in the order they appear.
    package var all: [Vector]

    /// The vector labelled `label`, if the article has one.
    package subscript(label: String) -> Vector? { all.first { $0.label == label } }

    /// Reads the vectors of the DocC article `name` (`WireProtocol.md`) of the catalogue of module `module`, found from
    /// `filePath` (a test's `#filePath`, under `Tests/<target>/`).
    package init(article name: String, module: String, testFile filePath: String) throws {
        var root = URL(fileURLWithPath: filePath).deletingLastPathComponent()
        while root.lastPathComponent != "Tests", root.path != "/" { root.deleteLastPathComponent() }
        let path = root.deletingLastPathComponent()
            .appendingPathComponent("Sources/\(module)/Documentation.docc/\(name)").path
        try self.init(contentsOf: path)
    }

    /// Reads the vectors of the article at `path`.
    package init(contentsOf path: String) throws {
        try self.init(text: String(contentsOfFile: path, encoding: .utf8), name: path)
    }

    /// Reads the vectors of an article's `text`; `name` says which article in errors.
    package init(text: String, name: String = "article") throws {
        var vectors: [Vector] = []
        var current: Vector?
        var inFence = false
        var firstLineOfFence = false
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = String(rawLine)
            if line.trimmingCharacters(in: .whitespaces).hasPrefix("```") {
                if let vector = current { vectors.append(vector) }
                current = nil
                inFence.toggle()
                firstLineOfFence = inFence
                continue
            }
            guard inFence else { continue }
            let content = String(line.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)[0])
                .trimmingCharacters(in: .whitespaces)
            if firstLineOfFence {
                firstLineOfFence = false
                if content.hasPrefix("vector:") {
                    let label = content.dropFirst("vector:".count).trimmingCharacters(in: .whitespaces)
                    guard !label.isEmpty, !vectors.contains(where: { $0.label == label }) else {
                        throw Problem(description: "\(name):\(index + 1): missing or repeated vector label `\(label)`")
                    }
                    current = Vector(label: label, bytes: [], fields: [:], line: index + 1)
                }
                continue
            }
            guard current != nil, !content.isEmpty else { continue }
            if let colon = content.firstIndex(of: ":") {
                let key = content[..<colon].trimmingCharacters(in: .whitespaces)
                current?.fields[key] = content[content.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                continue
            }
            for group in content.split(separator: " ") {
                guard group.count % 2 == 0, let bytes = Self.bytes(group) else {
                    throw Problem(description: "\(name):\(index + 1): `\(group)` is not an even number of hex digits")
                }
                current?.bytes.append(contentsOf: bytes)
            }
        }
        all = vectors
    }

    private static func bytes(_ group: Substring) -> [UInt8]? {
        var result: [UInt8] = []
        var index = group.startIndex
        while index < group.endIndex {
            let next = group.index(index, offsetBy: 2)
            guard let byte = UInt8(group[index..<next], radix: 16) else { return nil }
            result.append(byte)
            index = next
        }
        return result
    }

    /// `bytes` as lower-case hex, for readable failure messages.
    package static func hex(_ bytes: some Sequence<UInt8>) -> String {
        bytes.map { byte in
            let digits = String(byte, radix: 16)
            return digits.count == 1 ? "0" + digits : digits
        }.joined()
    }

    /// A field's value as an unsigned integer: decimal, or hex after `0x`.
    package static func integer(_ text: String?) -> UInt64? {
        guard let text else { return nil }
        let cleaned = text.replacingOccurrences(of: "_", with: "")
        if cleaned.hasPrefix("0x") { return UInt64(cleaned.dropFirst(2), radix: 16) }
        return UInt64(cleaned)
    }
}
