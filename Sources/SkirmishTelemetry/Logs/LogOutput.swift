#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where finished log lines go: one call per line, the line ending in `\n`.
///
/// The command line replaces the standard one with a sink that keeps its live progress line intact; tests capture.
package struct LogOutput: Sendable {
    package let write: @Sendable (String) -> Void

    package init(write: @escaping @Sendable (String) -> Void) {
        self.write = write
    }

    /// Stderr through ``LogWriter/standardError``: lines from several threads are queued whole and in order, and
    /// written by the writer's own thread, so a reader who stops reading never blocks a logging thread.
    ///
    /// A line that cannot be written (stderr closed, a full disk) or finds the queue full is dropped: a log must
    /// never stop the program.
    package static let standardError = LogOutput { line in LogWriter.standardError.write(line) }

    /// Writes every byte of `text` to `descriptor`, retrying after a signal; gives up quietly on any other error.
    package static func writeAll(_ text: String, to descriptor: Int32) {
        var text = text
        text.withUTF8 { bytes in
            guard let base = bytes.baseAddress else { return }
            var offset = 0
            while offset < bytes.count {
                let written = systemWrite(descriptor, base + offset, bytes.count - offset)
                if written > 0 {
                    offset += written
                } else if written < 0 && errno == EINTR {
                    continue
                } else {
                    return
                }
            }
        }
    }
}

/// `write(2)`, named apart from ``LogOutput/write``.
private func systemWrite(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
    write(descriptor, bytes, count)
}
