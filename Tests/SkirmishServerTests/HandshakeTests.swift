import SkirmishWire
import Testing

@testable import SkirmishServer

@Suite struct CookieJarTests {
    let jar = CookieJar(key0: 1, key1: 2)
    let address: [UInt8] = [127, 0, 0, 1, 0x9C, 0x40]
    let second: UInt64 = 1_000_000_000

    @Test func aCookieIsValidForItsAddressForTwentyToThirtySeconds() {
        let now = 1_000 * second
        let cookie = jar.cookie(for: address, now: now)
        #expect(jar.isValid(cookie, for: address, now: now))
        #expect(jar.isValid(cookie, for: address, now: now + 20 * second))
        #expect(!jar.isValid(cookie, for: address, now: now + 30 * second))
        #expect(!jar.isValid(cookie, for: [127, 0, 0, 1, 0x9C, 0x41], now: now))
        #expect(!jar.isValid(cookie, for: address, now: now - 20 * second), "a cookie from the future is refused")
    }

    @Test func forgedAndZeroCookiesAreRefused() {
        let now = 50 * second
        var cookie = jar.cookie(for: address, now: now)
        cookie.low ^= 1
        #expect(!jar.isValid(cookie, for: address, now: now))
        #expect(!jar.isValid(.zero, for: address, now: now))
        #expect(!CookieJar(key0: 3, key1: 4).isValid(jar.cookie(for: address, now: now), for: address, now: now))
    }

    /// The cookie's time field is opaque: it counts epochs from a random per-process point, so it does not tell an
    /// attacker how long the host has been up (an uptime of 1,000 s gave epoch 100 before).
    @Test func theCookieDoesNotTellTheHostsUptime() {
        let now = 1_000 * second
        let first = CookieJar()
        let second = CookieJar()
        let a = first.cookie(for: address, now: now)
        let b = second.cookie(for: address, now: now)
        #expect(a.high != now / CookieJar.epochLength && b.high != now / CookieJar.epochLength)
        #expect(a.high != b.high, "each process draws its own offset")
        // Still a working cookie for 20–30 s.
        #expect(first.isValid(a, for: address, now: now + 20 * self.second))
        #expect(!first.isValid(a, for: address, now: now + 30 * self.second))
    }
}

@Suite struct MatchmakerTests {
    @Test func playersFillTablesPerGameAndSeatCount() throws {
        var matchmaker = Matchmaker()
        let puck = Matchmaker.Table(game: .puck, seats: 2)
        let snap3 = Matchmaker.Table(game: .snap, seats: 3)
        let a = try matchmaker.seat(peer: 1, at: puck, now: 0).get()
        let b = try matchmaker.seat(peer: 2, at: snap3, now: 0).get()
        let c = try matchmaker.seat(peer: 3, at: puck, now: 0).get()
        #expect(a.isNew && !a.isFull && a.seat == 0)
        #expect(b.match != a.match)
        #expect(c.match == a.match && c.seat == 1 && c.isFull)
        let d = try matchmaker.seat(peer: 4, at: snap3, now: 0).get()
        let e = try matchmaker.seat(peer: 5, at: snap3, now: 0).get()
        #expect(d.match == b.match && e.match == b.match && e.isFull && e.seat == 2)
        #expect(matchmaker.formingCount == 0)
    }

    @Test func impossibleTablesAndUnknownMatchesAreRefused() {
        var matchmaker = Matchmaker()
        #expect(matchmaker.seat(peer: 1, at: .init(game: .puck, seats: 3), now: 0) == .failure(.badRequest))
        #expect(matchmaker.seat(peer: 1, at: .init(game: .snap, seats: 5), now: 0) == .failure(.badRequest))
        #expect(
            matchmaker.seat(peer: 1, at: .init(game: .snap, seats: 2), requested: 77, now: 0) == .failure(.noSuchMatch))
    }

    @Test func aFriendJoinsTheRequestedMatch() throws {
        var matchmaker = Matchmaker()
        let table = Matchmaker.Table(game: .snap, seats: 4)
        let first = try matchmaker.seat(peer: 1, at: table, now: 0).get()
        _ = try matchmaker.seat(peer: 2, at: table, now: 0).get()
        let other = try matchmaker.seat(
            peer: 3, at: Matchmaker.Table(game: .snap, seats: 4), requested: first.match, now: 0
        ).get()
        #expect(other.match == first.match && other.seat == 2)
    }

    @Test func waitingTooLongExpiresAndLeavingReopensASeat() throws {
        var matchmaker = Matchmaker(.init(waitTimeout: 30))
        let table = Matchmaker.Table(game: .snap, seats: 3)
        let first = try matchmaker.seat(peer: 1, at: table, now: 0).get()
        _ = try matchmaker.seat(peer: 2, at: table, now: 5).get()
        matchmaker.leave(peer: 2, match: first.match)
        let again = try matchmaker.seat(peer: 3, at: table, now: 6).get()
        #expect(again.match == first.match && again.seat == 1)
        #expect(matchmaker.expire(now: 29).isEmpty)
        #expect(matchmaker.expire(now: 30) == [.init(match: first.match, peers: [1, 3])])
        #expect(matchmaker.formingCount == 0)
        let fresh = try matchmaker.seat(peer: 4, at: table, now: 31).get()
        #expect(fresh.isNew && fresh.match != first.match)
    }

    @Test func formingMatchesAreBoundedAndIDsStrideByLoop() throws {
        var bounded = Matchmaker(.init(maxForming: 2, firstID: 2, idStride: 4))
        for peer in 0..<2 {
            _ = try bounded.seat(peer: UInt32(peer), at: .init(game: peer == 0 ? .puck : .suns, seats: 2), now: 0).get()
        }
        #expect(bounded.seat(peer: 9, at: .init(game: .snap, seats: 2), now: 0) == .failure(.serverFull))
        let next = try bounded.seat(peer: 10, at: .init(game: .puck, seats: 2), now: 0).get()
        #expect(next.match == 2 && next.isFull)
        let created = try bounded.seat(peer: 11, at: .init(game: .snap, seats: 2), now: 0).get()
        #expect(created.match == 10, "ids advance by the stride: 2, 6, 10")
    }
}
