import Glibc
import SkirmishNet
import SkirmishWire

@testable import SkirmishDDNet

/// A test-only runtime for ``DDNetConnection``s over real loopback UDP: one non-blocking socket per bot, `poll`,
/// and the monotonic clock read here and passed in, as the real runtime does.
///
/// It can lose datagrams at a seeded rate in both directions and rewrite what a bot receives, to play a lossy link
/// or a corrupted snapshot against the real server. Everything it learns is kept per bot for the test to check.
final class LoopbackDriver {
    /// One bot: its connection, socket and what it reported.
    struct Bot {
        var connection: DDNetConnection
        let socket: Int32
        var session: DDNetConnection.Session?
        var closed: CloseReason?
        var chat: [DDNetConnection.ChatLine] = []
        var worlds = 0
        var lastWorld = World()
        var timings = 0
        var metrics: [ClientMetric] = []
    }

    private(set) var bots: [Bot] = []
    private var actions = ClientActions<DDNetConnection>()
    /// The chance that a datagram is dropped, each way.
    var lossRate = 0.0
    private var random: UInt64
    /// Rewrites a datagram bot `index` is about to receive (with the bot's connection for its token).
    var rewrite: ((_ index: Int, _ datagram: inout [UInt8], _ connection: DDNetConnection) -> Void)?

    /// Bots for the server at `port`, one socket each; `seed` drives the loss.
    init(port: UInt16, count: Int, configuration: DDNetConnection.Configuration = .init(), seed: UInt64 = 1) throws {
        random = seed
        for player in 0..<count {
            let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
            guard fd >= 0 else { throw DDNetServer.ServerError(message: "socket: errno \(errno)") }
            var local = sockaddr_in.loopback(port: 0)
            var server = sockaddr_in.loopback(port: port)
            let size = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, size) }
            }
            let connected = withUnsafePointer(to: &server) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, size) }
            }
            guard bound == 0, connected == 0, fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) == 0 else {
                let error = errno
                close(fd)
                throw DDNetServer.ServerError(message: "bind/connect: errno \(error)")
            }
            let setup = ConnectionSetup(
                transport: .udp, player: player, name: "bot-\(player)", seed: seed + UInt64(player))
            bots.append(Bot(connection: DDNetConnection(configuration: configuration, setup: setup), socket: fd))
        }
    }

    deinit {
        for bot in bots { close(bot.socket) }
    }

    /// The monotonic clock.
    static func now() -> Instant {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Instant(nanoseconds: UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec))
    }

    /// Starts every bot.
    func start() {
        let now = Self.now()
        for index in bots.indices {
            bots[index].connection.start(now: now, into: &actions)
            execute(index)
        }
    }

    /// Hands bot `index` a message from its agent.
    func send(_ message: DDNetConnection.Message, from index: Int) {
        bots[index].connection.send(message, now: Self.now(), into: &actions)
        execute(index)
    }

    /// Closes every bot politely.
    func closeAll() {
        let now = Self.now()
        for index in bots.indices {
            bots[index].connection.close(now: now, into: &actions)
            execute(index)
        }
    }

    /// Runs the loop until `done` holds or `timeout` passes; returns whether `done` held.
    @discardableResult
    func run(timeout: Duration, until done: (LoopbackDriver) -> Bool) -> Bool {
        let deadline = Self.now() + timeout
        var descriptors = bots.map { pollfd(fd: $0.socket, events: Int16(POLLIN), revents: 0) }
        var datagram = [UInt8](repeating: 0, count: 2_048)
        // Bounded in count as well as time: at most one iteration per millisecond of the timeout, with slack.
        let limit = 100 + Int(timeout.seconds * 5_000)
        for _ in 0..<limit {
            if done(self) { return true }
            var now = Self.now()
            if now >= deadline { return false }
            var earliest = deadline
            for index in bots.indices {
                if bots[index].connection.nextDeadline <= now {
                    bots[index].connection.tick(now: now, into: &actions)
                    execute(index)
                }
                earliest = min(earliest, bots[index].connection.nextDeadline)
            }
            let wait = earliest > now ? min(10, Int32((earliest - now).seconds * 1_000)) : 0
            guard poll(&descriptors, nfds_t(descriptors.count), wait) >= 0 else { continue }
            now = Self.now()
            for index in bots.indices where descriptors[index].revents & Int16(POLLIN) != 0 {
                for _ in 0..<256 {
                    let count = recv(bots[index].socket, &datagram, datagram.count, Int32(MSG_DONTWAIT))
                    guard count > 0 else { break }
                    if lossRate > 0 && nextRandom() < lossRate { continue }
                    var bytes = Array(datagram[..<count])
                    rewrite?(index, &bytes, bots[index].connection)
                    bytes.withUnsafeBytes { bots[index].connection.receive($0, now: now, into: &actions) }
                    execute(index)
                }
            }
        }
        return done(self)
    }

    /// Writes bot `index`'s packets (losing some) and records its events and metrics.
    private func execute(_ index: Int) {
        for packet in 0..<actions.packetCount {
            if lossRate > 0 && nextRandom() < lossRate { continue }
            actions.withPacket(packet) { bytes in _ = Glibc.send(bots[index].socket, bytes.baseAddress, bytes.count, 0)
            }
        }
        while let event = actions.nextEvent() {
            switch event {
            case .established(let session), .resumed(let session): bots[index].session = session
            case .closed(let reason): bots[index].closed = reason
            case .message(.chat(let line)): bots[index].chat.append(line)
            case .message(.world(let world)):
                bots[index].worlds += 1
                bots[index].lastWorld = world
            case .message(.inputTiming): bots[index].timings += 1
            case .message: break
            }
        }
        while let metric = actions.nextMetric() { bots[index].metrics.append(metric) }
        actions.removeAll()
    }

    /// A uniform number in [0, 1) from a seeded SplitMix64.
    private func nextRandom() -> Double {
        random &+= 0x9E37_79B9_7F4A_7C15
        var z = random
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return Double((z ^ (z >> 31)) >> 11) / Double(1 << 53)
    }

    /// How many of bot `index`'s metric events match.
    func count(_ index: Int, where match: (ClientMetric) -> Bool) -> Int {
        bots[index].metrics.filter(match).count
    }

    /// Every error kind bot `index` counted.
    func errors(_ index: Int) -> [String] {
        bots[index].metrics.compactMap { if case .error(let kind) = $0 { kind } else { nil } }
    }
}
