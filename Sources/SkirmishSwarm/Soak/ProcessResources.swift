#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// This process's resident memory and open file descriptors, from `/proc` (Linux); `nil` where it cannot be read.
public enum ProcessResources {
    /// One reading.
    public struct Reading: Sendable, Hashable {
        /// Resident set size, in bytes (`VmRSS`); `nil` where `/proc` cannot be read.
        public var residentBytes: UInt64?
        /// Open file descriptors (entries of `/proc/self/fd`); `nil` where `/proc` cannot be read.
        public var openFiles: Int?
    }

    /// Reads `/proc/self/status` and counts `/proc/self/fd` now.
    public static func current() -> Reading {
        Reading(residentBytes: readStatus().flatMap(residentBytes(status:)), openFiles: openFiles())
    }

    /// `VmRSS` of a `/proc/<pid>/status` text, in bytes.
    public static func residentBytes(status: String) -> UInt64? {
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            let fields = line.dropFirst("VmRSS:".count).split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard let value = fields.first.flatMap({ UInt64($0) }) else { return nil }
            let unit = fields.count > 1 ? fields[1].lowercased() : "kb"
            switch unit {
            case "kb": return value * 1_024
            case "mb": return value * 1_048_576
            default: return value
            }
        }
        return nil
    }

    /// Open descriptors: the entries of `/proc/self/fd`, less the one this count holds open while reading it.
    public static func openFiles() -> Int? {
        guard let directory = opendir("/proc/self/fd") else { return nil }
        defer { closedir(directory) }
        var count = 0
        // The name is read in place: copying `d_name` whole (256 bytes) reads past a record glibc sized to its name,
        // and faults when the record ends its buffer at a page's end (swift-corelibs-foundation PR 5472).
        let nameOffset = MemoryLayout<dirent>.offset(of: \dirent.d_name) ?? 19
        while let entry = readdir(directory) {
            let name = UnsafeRawPointer(entry).advanced(by: nameOffset).assumingMemoryBound(to: UInt8.self)
            let isDot = name[0] == UInt8(ascii: ".") && (name[1] == 0 || (name[1] == UInt8(ascii: ".") && name[2] == 0))
            if !isDot { count += 1 }
        }
        return max(0, count - 1)
    }

    private static func readStatus() -> String? {
        let descriptor = open("/proc/self/status", O_RDONLY)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4_096)
        // /proc/self/status is a few KiB; the bound only guards against a misbehaving file system.
        for _ in 0..<64 {
            let got = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            guard got > 0 else { break }
            bytes.append(contentsOf: chunk[..<got])
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
