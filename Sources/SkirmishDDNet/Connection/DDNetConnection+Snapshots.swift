import SkirmishNet
import SkirmishWire

extension DDNetConnection {
    /// One snapshot message (`NETMSG_SNAP`, `SNAPSINGLE` or `SNAPEMPTY`): gathered with its other parts, decoded
    /// against its base, checked against the server's checksum, kept as a base for later deltas and turned into a
    /// ``World`` (`CClient::ProcessServerPacket`).
    mutating func receiveSnapshot(
        _ id: Int32, _ unpacker: inout Unpacker, now: Instant, into actions: inout ClientActions<Self>
    ) {
        let tick = unpacker.int()
        let deltaTick = tick &- unpacker.int()
        var parts: Int32 = 1
        var part: Int32 = 0
        if id == Wire.System.snap {
            parts = unpacker.int()
            part = unpacker.int()
        }
        var crc: Int32 = 0
        var size: Int32 = 0
        if id != Wire.System.snapEmpty {
            crc = unpacker.int()
            size = unpacker.int()
        }
        guard !unpacker.failed, size >= 0, size <= Int32(SnapshotAssembler.maxPartSize),
            let data = unpacker.raw(Int(size))
        else {
            // Counted as a bad snapshot by `receiveMessage`, which sees the failure.
            unpacker.fail()
            return
        }
        // Snapshots before `ENTERGAME` are not ours to use yet, and one not newer than the acknowledged is old.
        guard phase == .entering || phase == .inGame, tick > ackTick else { return }

        let outcome: SnapshotAssembler.Outcome
        do {
            outcome = try assembler.add(.init(tick: tick, count: Int(parts), index: Int(part), data: data))
        } catch {
            actions.record(.error(kind: error.kind))
            return
        }
        if assembler.abandoned { actions.record(.event(index: Event.snapshotIncomplete.rawValue, count: 1)) }
        guard case .complete(let compressed) = outcome else { return }

        // The base: the empty snapshot, or one kept from before.
        var base: Int?
        if deltaTick >= 0 {
            base = snapshots.firstIndex { $0.tick == deltaTick }
            if base == nil {
                actions.record(.event(index: Event.snapshotBaseMissing.rawValue, count: 1))
                requestFullSnapshot(now: now, into: &actions)
                return
            }
        }

        // The buffers take turns as `decoded`: each is made as large as the largest snapshot so far, with room to
        // spare, before it is filled. A game that grows (players joining, projectiles) then costs each buffer one
        // allocation in the next few snapshots, not one growth step per buffer whenever its turn comes (which kept
        // allocating for seconds in a 48-bot game).
        decoded.reserve(items: largestSnapshot.items * 5 / 4, words: largestSnapshot.words * 5 / 4)

        var scratch: [Int32] = []
        swap(&scratch, &words)
        defer { swap(&scratch, &words) }
        let touched: SnapshotDelta.Touched
        do throws(DecodeError) {
            let count: Int
            if compressed > 0 {
                let decompressed = assembler.bytes.withUnsafeBytes { bytes in
                    scratch.withUnsafeMutableBufferPointer { output in
                        VarInt.decompress(UnsafeRawBufferPointer(rebasing: bytes[..<compressed]), into: output)
                    }
                }
                guard let decompressed else { throw .badSnapshot }
                count = decompressed
            } else {
                // `CSnapshotDelta::EmptyDelta`: nothing deleted, nothing updated.
                scratch[0] = 0
                scratch[1] = 0
                scratch[2] = 0
                count = 3
            }
            touched = try scratch.withUnsafeBufferPointer { all throws(DecodeError) in
                let delta = UnsafeBufferPointer(rebasing: all[..<count])
                if let base { return try self.delta.apply(delta, to: snapshots[base], into: &decoded) }
                return try self.delta.apply(delta, to: Snapshot(), into: &decoded)
            }
        } catch {
            actions.record(.error(kind: error.kind))
            return
        }
        decoded.tick = tick
        largestSnapshot.items = max(largestSnapshot.items, decoded.count)
        largestSnapshot.words = max(largestSnapshot.words, decoded.wordCount)

        let observed = UInt32(bitPattern: crc)
        let computed = decoded.crc
        if id != Wire.System.snapEmpty && computed != observed {
            if !desyncOpen {
                desyncOpen = true
                let part = touched.onlyType.map { $0 < Wire.Item.names.count ? Wire.Item.names[$0] : "snapshot" }
                actions.record(
                    .desync(
                        Desync(
                            part: part ?? "snapshot", tick: UInt32(bitPattern: tick), expected: String(computed),
                            observed: String(observed))))
            }
            requestFullSnapshot(now: now, into: &actions)
            return
        }
        desyncOpen = false
        keep(now: now, into: &actions)
    }

    /// Stores the verified snapshot in `decoded` over the oldest kept one, acknowledges it, measures it and hands
    /// the world to the agent; the first one lets the bot into the game.
    private mutating func keep(now: Instant, into actions: inout ClientActions<Self>) {
        let tick = decoded.tick
        var oldest = 0
        for index in snapshots.indices where snapshots[index].tick < snapshots[oldest].tick { oldest = index }
        swap(&snapshots[oldest], &decoded)
        ackTick = tick

        clock.observe(tick: tick, arrival: now)
        if let age = clock.age(tick: tick, arrival: now, leastRoundTrip: leastRoundTrip) {
            actions.record(.snapshotAge(age))
        }
        if let last = lastSnapshotArrival { actions.record(.snapshotInterval(now - last)) }
        lastSnapshotArrival = now

        updateWorld(from: oldest)
        actions.deliver(.world(world))
        if phase == .entering {
            phase = .inGame
            nextInput = now
            nextPing = now
            actions.record(.handshake(now - startedAt))
            actions.established(
                Session(
                    clientID: world.localClientID, name: name, map: map, mapCRC: mapCRC, mapSize: mapSize,
                    tick: Int(tick)))
            sendInput(now: now, into: &actions)
        }
    }

    /// Acknowledges tick -1 at once, so the server's next snapshot is a full one (`CClient::ProcessServerPacket`
    /// after repeated checksum errors or a missing base).
    mutating func requestFullSnapshot(now: Instant, into actions: inout ClientActions<Self>) {
        ackTick = -1
        assembler.reset()
        actions.record(.event(index: Event.fullSnapshotRequested.rawValue, count: 1))
        sendInput(now: now, into: &actions)
    }

    /// Forgets every snapshot (a new map).
    mutating func resetSnapshots() {
        for index in snapshots.indices { snapshots[index].removeAll() }
        assembler.reset()
        ackTick = -1
        lastSnapshotArrival = nil
        desyncOpen = false
    }

    /// Reads the characters and the local player out of kept snapshot `index`.
    private mutating func updateWorld(from index: Int) {
        let snapshot = snapshots[index]
        world.tick = Int(snapshot.tick)
        world.characters.removeAll(keepingCapacity: true)
        for item in 0..<snapshot.count {
            let range = snapshot.range(item)
            switch snapshot.type(item) {
            case Wire.Item.character where range.count >= 22:
                let base = range.lowerBound
                let data = snapshot.data
                world.characters.append(
                    World.Character(
                        clientID: snapshot.id(item), x: Int(data[base + 1]), y: Int(data[base + 2]),
                        velocityX: Int(data[base + 3]), velocityY: Int(data[base + 4]),
                        direction: Int(data[base + 6]), hookState: Int(data[base + 9]), health: Int(data[base + 16]),
                        armor: Int(data[base + 17]), weapon: Int(data[base + 19])))
            case Wire.Item.playerInfo where range.count >= 5:
                if snapshot.data[range.lowerBound] != 0 { world.localClientID = snapshot.id(item) }
            default:
                break
            }
        }
    }
}
