import Foundation

/// The fenced code blocks of a DocC article, read from the article itself, so that a test can hold every block to
/// code that compiles and passes: an article whose code drifted from the API fails a test instead of misleading a
/// reader.
///
/// A block opens with a line that is exactly three backticks and a language (`swift`, `yaml`) and closes with a line
/// that is exactly three backticks. Public rather than `package`: the test targets that hold an article's code are
/// built without package access, as a user's own package would be.
public struct ArticleCode: Sendable {
    /// One fenced block.
    public struct Block: Sendable, Hashable {
        /// The language after the opening fence; empty when it names none.
        public var language: String
        /// The lines between the fences, joined with newlines, exactly as written.
        public var text: String
        /// The article's line of the opening fence, for failure messages.
        public var line: Int
    }

    /// Every block, in the order the article shows them.
    public var blocks: [Block]

    /// The blocks in `language`.
    public func blocks(in language: String) -> [Block] { blocks.filter { $0.language == language } }

    /// Reads the article `name` (`WritingABehavior.md`) of the DocC catalogue of module `module`, found from
    /// `testFile` (a test's `#filePath`, under `Tests/<target>/`).
    public init(article name: String, module: String, testFile: String) throws {
        let path = Self.packageRoot(of: testFile)
            .appendingPathComponent("Sources/\(module)/Documentation.docc/\(name)").path
        self.init(text: try String(contentsOfFile: path, encoding: .utf8))
    }

    /// Reads the blocks of an article's `text`.
    public init(text: String) {
        var blocks: [Block] = []
        var current: (language: String, line: Int, lines: [Substring])?
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            if let open = current {
                if line == "```" {
                    blocks.append(
                        Block(language: open.language, text: open.lines.joined(separator: "\n"), line: open.line))
                    current = nil
                } else {
                    current?.lines.append(line)
                }
            } else if line.hasPrefix("```") {
                current = (String(line.dropFirst(3)), index + 1, [])
            }
        }
        self.blocks = blocks
    }

    /// Every Swift source of the test target that `testFile` (a test's `#filePath`) belongs to, joined: what an
    /// article's Swift blocks must appear in, verbatim.
    public static func targetSources(of testFile: String) throws -> String {
        let directory = URL(fileURLWithPath: testFile).deletingLastPathComponent()
        return try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".swift") }
            .sorted()
            .map { try String(contentsOf: directory.appendingPathComponent($0), encoding: .utf8) }
            .joined(separator: "\n")
    }

    /// The package's root directory: the parent of the `Tests` directory `testFile` is under.
    public static func packageRoot(of testFile: String) -> URL {
        var root = URL(fileURLWithPath: testFile).deletingLastPathComponent()
        while root.lastPathComponent != "Tests", root.path != "/" { root.deleteLastPathComponent() }
        return root.deletingLastPathComponent()
    }
}
