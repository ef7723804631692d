import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A child process the tests start: Foundation's `Process` in the parts the tests use, spawned with `posix_spawn`
/// directly.
///
/// Why not `Process`: on Linux, swift-corelibs-foundation's `Process.run()` (Swift 6.3) finds the highest open
/// descriptor by copying whole `dirent` records of `/proc/self/fd`, reading up to 256 bytes past a record glibc sized
/// to its name; when a record ends its buffer at a page's end, the copy faults and the whole test process dies with
/// SIGSEGV (swift-corelibs-foundation pull request 5472). A test run that holds a thousand sockets and spawns a
/// hundred children met it under load. Here the child closes every descriptor above stderr with one
/// `posix_spawn_file_actions_addclosefrom_np`, as Foundation's emulation of close-on-exec intends.
///
/// As with `Process`: the child gets a process group of its own, a `Pipe` given as its stdout or stderr has its
/// writing end closed in the parent once the child has it (so the reader sees end-of-file when the child exits), a
/// `Pipe` given as stdin has its reading end closed, and `terminationStatus` is the exit code or the signal's number.
/// The child is reaped by a thread of its own that blocks in `waitpid` for that one PID; one still running when the
/// test process exits is killed then.
public final class ChildProcess: Sendable {
    /// A child not yet started: set what it runs and its stdio, then ``run()``.
    public init() {}

    private struct Setup {
        var executableURL: URL?
        var arguments: [String] = []
        var environment: [String: String]?
        var currentDirectoryURL: URL?
        var standardInput: (any Sendable)?
        var standardOutput: (any Sendable)?
        var standardError: (any Sendable)?
        var terminationHandler: (@Sendable (ChildProcess) -> Void)?
    }

    private struct State {
        var pid: pid_t = 0
        var status: Int32?
        var signalled = false
    }

    private let setup = Mutex(Setup())
    private let state = Mutex(State())
    private let done = DispatchGroup()

    /// The program, by its full path (no `PATH` search: `/usr/bin/env` finds one by name).
    public var executableURL: URL? {
        get { setup.withLock { $0.executableURL } }
        set { setup.withLock { $0.executableURL = newValue } }
    }
    /// The arguments after the program's own name.
    public var arguments: [String]? {
        get { setup.withLock { $0.arguments } }
        set { setup.withLock { $0.arguments = newValue ?? [] } }
    }
    /// The child's whole environment; `nil` (the default) passes this process's own.
    public var environment: [String: String]? {
        get { setup.withLock { $0.environment } }
        set { setup.withLock { $0.environment = newValue } }
    }
    /// The child's working directory; `nil` keeps this process's.
    public var currentDirectoryURL: URL? {
        get { setup.withLock { $0.currentDirectoryURL } }
        set { setup.withLock { $0.currentDirectoryURL = newValue } }
    }
    /// A `Pipe` or a `FileHandle`; `nil` inherits this process's.
    public var standardInput: Any? {
        get {
            let stream: (any Sendable)? = setup.withLock { $0.standardInput }
            return stream
        }
        set { setup.withLock { $0.standardInput = Self.stream(newValue) } }
    }
    /// A `Pipe` or a `FileHandle`; `nil` inherits this process's.
    public var standardOutput: Any? {
        get {
            let stream: (any Sendable)? = setup.withLock { $0.standardOutput }
            return stream
        }
        set { setup.withLock { $0.standardOutput = Self.stream(newValue) } }
    }
    /// A `Pipe` or a `FileHandle`; `nil` inherits this process's.
    public var standardError: Any? {
        get {
            let stream: (any Sendable)? = setup.withLock { $0.standardError }
            return stream
        }
        set { setup.withLock { $0.standardError = Self.stream(newValue) } }
    }
    /// Called once, on the reaping thread, when the child has exited (``waitUntilExit()`` has returned by then).
    /// Set it before ``run()``: a child that ends at once may have been reaped before a later assignment.
    public var terminationHandler: (@Sendable (ChildProcess) -> Void)? {
        get { setup.withLock { $0.terminationHandler } }
        set { setup.withLock { $0.terminationHandler = newValue } }
    }

    /// The child's PID, 0 before ``run()``.
    public var processIdentifier: Int32 { state.withLock { $0.pid } }
    /// Whether the child was started and has not been reaped.
    public var isRunning: Bool { state.withLock { $0.pid != 0 && $0.status == nil } }
    /// The exit code, or the number of the signal that ended the child (-1 when something else reaped it).
    public var terminationStatus: Int32 {
        state.withLock { state in
            guard let status = state.status else { preconditionFailure("the child process is still running") }
            return status
        }
    }
    /// Whether a signal ended the child (rather than `exit`).
    public var endedBySignal: Bool { state.withLock { $0.signalled } }

    private static func stream(_ value: Any?) -> (any Sendable)? {
        switch value {
        case nil: nil
        case let pipe as Pipe: pipe
        case let handle as FileHandle: handle
        default: preconditionFailure("a child's stdio is a Pipe or a FileHandle, not \(type(of: value!))")
        }
    }

    /// Starts the child; throws ``SpawnError`` when it cannot be spawned (no such file, not executable, no memory).
    public func run() throws {
        let setup = self.setup.withLock { $0 }
        guard let executable = setup.executableURL?.path else {
            throw SpawnError(step: "spawn (no executableURL set)", code: ENOENT)
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }

        // stdin, stdout, stderr first; everything above them closed after (the sources of the dups included).
        let streams: [(any Sendable)?] = [setup.standardInput, setup.standardOutput, setup.standardError]
        for (target, stream) in streams.enumerated() {
            guard let source = Self.descriptor(of: stream, reading: target == 0) else { continue }
            if source < 0 {
                // `FileHandle.nullDevice` has no descriptor of its own on Linux: the child opens /dev/null.
                try Self.check(
                    posix_spawn_file_actions_addopen(&actions, Int32(target), "/dev/null", O_RDWR, 0),
                    "open /dev/null")
            } else {
                try Self.check(posix_spawn_file_actions_adddup2(&actions, source, Int32(target)), "dup2")
            }
        }
        try Self.check(GNU.closeFrom(&actions, 3), "closefrom")
        if let directory = setup.currentDirectoryURL?.path {
            try Self.check(GNU.changeDirectory(&actions, directory), "chdir \(directory)")
        }
        // No signal blocked or ignored in the child: the thread calling run() may be a Dispatch worker, which blocks
        // signals, and a mask (like an ignored disposition) survives exec: `terminate()` would never reach the child.
        var none = sigset_t()
        sigemptyset(&none)
        var every = sigset_t()
        sigfillset(&every)
        sigdelset(&every, SIGKILL)
        sigdelset(&every, SIGSTOP)
        try Self.check(posix_spawnattr_setsigmask(&attributes, &none), "setsigmask")
        try Self.check(posix_spawnattr_setsigdefault(&attributes, &every), "setsigdefault")
        let flags = POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF
        try Self.check(posix_spawnattr_setflags(&attributes, Int16(flags)), "setflags")

        let argv = ([executable] + setup.arguments).map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        let environment: [UnsafeMutablePointer<CChar>?]? = setup.environment.map { variables in
            variables.map { name, value in strdup("\(name)=\(value)") } + [nil]
        }
        defer { for variable in environment ?? [] { free(variable) } }

        var pid: pid_t = 0
        let spawned = argv.withUnsafeBufferPointer { argv in
            if let environment {
                environment.withUnsafeBufferPointer { envp in
                    posix_spawn(&pid, executable, &actions, &attributes, argv.baseAddress!, envp.baseAddress!)
                }
            } else {
                posix_spawn(&pid, executable, &actions, &attributes, argv.baseAddress!, environ)
            }
        }
        try Self.check(spawned, "spawn \(executable)")

        // The parent's copies of the child's pipe ends: closed, so end-of-file comes when the child is gone.
        for (target, stream) in streams.enumerated() {
            guard let pipe = stream as? Pipe else { continue }
            try? (target == 0 ? pipe.fileHandleForReading : pipe.fileHandleForWriting).close()
        }
        let child = pid
        done.enter()
        state.withLock { $0.pid = child }
        Self.live.withLock { live in
            if !live.installed {
                live.installed = true
                atexit { ChildProcess.killLeftovers() }
            }
            live.pids.insert(child)
        }
        let reaper = Thread { [self] in reap(child) }
        reaper.name = "reap-\(child)"
        reaper.start()
    }

    private func reap(_ pid: pid_t) {
        // Waits for the exit without reaping (WNOWAIT), then reaps under the state's lock, which ``send(_:)`` holds
        // while it signals: the PID is never freed (and maybe reused) between `send`'s check and its `kill`.
        var info = siginfo_t()
        while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) == -1, errno == EINTR {}
        state.withLock { state in
            var status: Int32 = 0
            var reaped: pid_t = -1
            repeat { reaped = waitpid(pid, &status, 0) } while reaped == -1 && errno == EINTR
            guard reaped == pid else {
                // Someone else reaped it (a waitpid elsewhere in the test process): the status is lost.
                state.status = -1
                return
            }
            // WIFEXITED / WEXITSTATUS / WTERMSIG, spelled out: the C macros do not reach Swift.
            let signal = status & 0x7f
            state.signalled = signal != 0
            state.status = signal == 0 ? (status >> 8) & 0xff : signal
        }
        Self.live.withLock { _ = $0.pids.remove(pid) }
        done.leave()
        setup.withLock { $0.terminationHandler }?(self)
    }

    /// Children started and not yet reaped, in the whole test process.
    private static let live = Mutex<(pids: Set<pid_t>, installed: Bool)>(([], false))

    /// At the test process's exit, SIGKILL to every child still running and its process group (a browser's renderers,
    /// a shell's commands): a test that threw before its cleanup (a failed `#require`) must not leave a server
    /// holding ports and a core after the run.
    private static func killLeftovers() {
        for pid in live.withLock({ $0.pids }) {
            kill(-pid, SIGKILL)
            kill(pid, SIGKILL)
        }
    }

    /// Blocks until the child has exited (returns at once if it never started).
    public func waitUntilExit() {
        guard processIdentifier != 0 else { return }
        done.wait()
    }

    /// Waits without blocking a thread until the child has exited.
    public func exited() async {
        guard processIdentifier != 0 else { return }
        await withCheckedContinuation { continuation in
            done.notify(queue: .global()) { continuation.resume() }
        }
    }

    /// Sends `signal` to the child while it runs (never to a reaped PID, which the system may have reused).
    public func send(_ signal: Int32) {
        state.withLock { state in
            guard state.pid != 0, state.status == nil else { return }
            kill(state.pid, signal)
        }
    }

    /// SIGTERM, as `Process.terminate()`.
    public func terminate() { send(SIGTERM) }
    /// SIGINT, as `Process.interrupt()`.
    public func interrupt() { send(SIGINT) }

    private static func descriptor(of stream: (any Sendable)?, reading: Bool) -> Int32? {
        switch stream {
        case let pipe as Pipe:
            (reading ? pipe.fileHandleForReading : pipe.fileHandleForWriting).fileDescriptor
        case let handle as FileHandle: handle.fileDescriptor
        default: nil
        }
    }

    private static func check(_ result: Int32, _ what: String) throws {
        guard result != 0 else { return }
        throw SpawnError(step: what, code: result)
    }

    /// A child that could not be started: the step that failed (`spawn /usr/bin/tool`) and the system's reason.
    public struct SpawnError: Error, CustomStringConvertible {
        /// What was being done, naming the program or path.
        public let step: String
        /// The `errno` value.
        public let code: Int32
        /// `spawn /nonexistent/tool: No such file or directory`.
        public var description: String { "\(step): \(String(cString: strerror(code)))" }
    }
}

/// glibc's two spawn actions that Swift's Glibc module leaves out (they are declared only under `_GNU_SOURCE`), found
/// by name; glibc has had both since 2.34.
private enum GNU {
    typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    typealias ChangeDirectory =
        @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32

    static func closeFrom(_ actions: UnsafeMutablePointer<posix_spawn_file_actions_t>, _ from: Int32) -> Int32 {
        guard let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") else { return ENOSYS }
        return unsafeBitCast(symbol, to: CloseFrom.self)(actions, from)
    }

    static func changeDirectory(_ actions: UnsafeMutablePointer<posix_spawn_file_actions_t>, _ path: String) -> Int32 {
        guard let symbol = dlsym(nil, "posix_spawn_file_actions_addchdir_np") else { return ENOSYS }
        return path.withCString { unsafeBitCast(symbol, to: ChangeDirectory.self)(actions, $0) }
    }
}
