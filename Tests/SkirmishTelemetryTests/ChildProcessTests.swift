import Foundation
import SkirmishTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The tests' own `posix_spawn` (`ChildProcess`, in place of Foundation's `Process`, whose `run()` can fault on
/// Linux): what a test relies on when it starts a collector, a browser or `skirmish` itself.
struct ChildProcessTests {
    /// Runs `/bin/sh -c script` with stdout (and stderr) into one pipe; returns the status and the output.
    private func shell(_ script: String, environment: [String: String]? = nil, directory: URL? = nil) async throws
        -> (status: Int32, output: String, signalled: Bool)
    {
        let child = ChildProcess()
        child.executableURL = URL(fileURLWithPath: "/bin/sh")
        child.arguments = ["-c", script]
        child.environment = environment
        child.currentDirectoryURL = directory
        let pipe = Pipe()
        child.standardOutput = pipe
        child.standardError = pipe
        try child.run()
        // End-of-file comes once the child is gone: the parent's copy of the writing end was closed by run().
        let output = try pipe.fileHandleForReading.readToEnd() ?? Data()
        await child.exited()
        return (child.terminationStatus, String(decoding: output, as: UTF8.self), child.endedBySignal)
    }

    @Test func itsOutputExitStatusEnvironmentAndDirectoryAreTheChildsOwn() async throws {
        let run = try await shell("echo out; echo err >&2; exit 3")
        #expect(run.status == 3)
        #expect(!run.signalled)
        #expect(run.output == "out\nerr\n")
        let environment = try await shell("echo \"$ONLY\" \"${HOME:-none}\"", environment: ["ONLY": "this"])
        #expect(environment.output == "this none\n")
        let directory = try await shell("pwd", directory: URL(fileURLWithPath: "/tmp"))
        #expect(directory.output == "/tmp\n")
    }

    @Test func theChildInheritsNoDescriptorOfTheTestProcessButItsStdio() async throws {
        // A pipe and a socket open here, without close-on-exec: a child that kept them would hold the pipe's writer
        // open (no end-of-file for its reader) and the socket's port.
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        let socketFD = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        defer {
            close(ends[0])
            close(ends[1])
            close(socketFD)
        }
        let run = try await shell("ls /proc/self/fd")
        // `ls` sees 0, 1, 2 and the descriptor it reads /proc/self/fd through; nothing of ours.
        let open = run.output.split(separator: "\n").compactMap { Int32($0) }
        #expect(open.filter { $0 > 2 }.count <= 1, "\(open)")
        for fd in [ends[0], ends[1], socketFD] where fd > 3 {
            #expect(!open.contains(fd), "descriptor \(fd) leaked into the child: \(open)")
        }
    }

    @Test func aSignalEndsItAndIsReportedAsTheSignal() async throws {
        let child = ChildProcess()
        child.executableURL = URL(fileURLWithPath: "/bin/sleep")
        child.arguments = ["30"]
        let ended = DispatchSemaphore(value: 0)
        child.terminationHandler = { _ in ended.signal() }
        try child.run()
        #expect(child.isRunning)
        #expect(child.processIdentifier > 0)
        child.terminate()
        child.waitUntilExit()
        #expect(ended.wait(timeout: .now() + 10) == .success)
        #expect(!child.isRunning)
        #expect(child.endedBySignal)
        #expect(child.terminationStatus == SIGTERM)
        // A reaped child is never signalled again (its PID may belong to another process by now).
        child.interrupt()
    }

    @Test func aMissingExecutableIsAnErrorThatNamesIt() throws {
        let child = ChildProcess()
        child.executableURL = URL(fileURLWithPath: "/nonexistent/tool")
        #expect {
            try child.run()
        } throws: { error in
            "\(error)".contains("/nonexistent/tool")
        }
        #expect(!child.isRunning)
    }
}
