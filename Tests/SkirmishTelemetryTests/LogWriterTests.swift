import Foundation
import Testing

@testable import SkirmishTelemetry

#if canImport(Glibc)
    import Glibc
#endif

/// A log writer never blocks its callers on a reader that stops reading, keeps what it queued in order, and says what
/// it had to drop, where.
@Suite struct LogWriterTests {
    /// A pipe whose kernel buffer holds one page, so a few lines fill it.
    static func smallPipe() throws -> (read: Int32, write: Int32) {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { throw POSIXError(.EMFILE) }
        // F_SETPIPE_SZ (Linux): the smallest a pipe can be, one page.
        _ = fcntl(ends[1], 1031, 4096)
        return (ends[0], ends[1])
    }

    /// Everything readable from `descriptor` until `done` says it is enough (blocking reads: the writer is writing).
    static func read(_ descriptor: Int32, until done: (String) -> Bool) -> String {
        var text = ""
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while !done(text) {
            let count = Glibc.read(descriptor, &buffer, buffer.count)
            guard count > 0 else { break }
            text += String(decoding: buffer[..<count], as: UTF8.self)
        }
        return text
    }

    @Test(.timeLimit(.minutes(1)))
    func aReaderThatStopsReadingCostsLinesNotTheCaller() throws {
        let ends = try Self.smallPipe()
        defer {
            close(ends.read)
            close(ends.write)
        }
        let writer = LogWriter(descriptor: ends.write, capacity: 16_384)
        // Far more than the pipe and the queue hold together; with a blocking write this loop would never end.
        let line = String(repeating: "x", count: 99) + "\n"
        for index in 0..<2_000 { writer.write("\(index) " + line) }
        #expect(writer.drain(within: .milliseconds(200)) == false, "the reader took nothing, so the queue stays")
        // The reader comes back: every line is either written, whole and in order, or counted in a notice where it
        // was dropped.
        func account(_ text: String) -> (written: [Int], dropped: Int) {
            var written: [Int] = []
            var dropped = 0
            for line in text.split(separator: "\n", omittingEmptySubsequences: false).dropLast() {
                if line.hasPrefix("skirmish: ") {
                    dropped += Int(line.dropFirst(10).prefix { $0 != " " }) ?? 0
                } else {
                    written.append(Int(line.prefix { $0 != " " }) ?? -1)
                }
            }
            return (written, dropped)
        }
        let text = Self.read(ends.read) { text in
            let (written, dropped) = account(text)
            return written.count + dropped >= 2_000
        }
        let (written, dropped) = account(text)
        #expect(written.count + dropped == 2_000)
        #expect(written == written.sorted() && Set(written).count == written.count, "written lines keep their order")
        #expect(written.first == 0)
        #expect(dropped > 0, "the queue is bounded: most of the 200 KB were dropped")
        #expect(written.count >= 16_384 / 110, "at least a queue's worth (lines of up to 110 bytes) was kept")
        #expect(text.contains("log lines dropped here: the output was not read fast enough\n"))
    }

    @Test(.timeLimit(.minutes(1)))
    func drainWaitsForEveryQueuedLine() throws {
        let ends = try Self.smallPipe()
        defer {
            close(ends.read)
            close(ends.write)
        }
        let writer = LogWriter(descriptor: ends.write)
        // 20 KB: five pipe-fulls, written as the reader takes them.
        let reader = Thread {
            _ = Self.read(ends.read) { $0.count >= 20 * 1_000 }
        }
        reader.start()
        for index in 0..<200 { writer.write(String(format: "%04d", index) + String(repeating: ".", count: 95) + "\n") }
        #expect(writer.drain(within: .seconds(30)))
    }
}
