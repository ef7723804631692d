import SkirmishNet
import Testing

/// Which pages may open `/ws` (issue 19, item 1): the page's own origin by default, a configured list, and programs
/// that send no Origin at all.
@Suite struct OriginPolicyTests {
    @Test func thePagesOwnOriginIsAdmittedByDefault() {
        let policy = OriginPolicy()
        #expect(policy.admits(origin: "http://127.0.0.1:8080", host: "127.0.0.1:8080"))
        #expect(policy.admits(origin: "http://localhost:8080", host: "localhost:8080"))
        #expect(policy.admits(origin: "http://[::1]:8080", host: "[::1]:8080"))
        #expect(policy.admits(origin: nil, host: "127.0.0.1:8080"), "no Origin: a program, not a page")
    }

    /// DNS rebinding: a site can point its own name at 127.0.0.1, and its page then sends an `Origin` and a `Host`
    /// that match. A server reached by a name admits its pages only through the allow-list.
    @Test func aMatchingOriginUnderADNSNameIsNotEnough() {
        #expect(!OriginPolicy().admits(origin: "http://evil.example:8080", host: "evil.example:8080"))
        #expect(!OriginPolicy().admits(origin: "https://Play.Example.com", host: "play.example.com"))
        #expect(
            OriginPolicy(allowed: ["https://play.example.com"]).admits(
                origin: "https://Play.Example.com", host: "play.example.com"))
    }

    @Test(arguments: [
        "http://evil.example", "http://127.0.0.1:9999", "null", "file://", "ws://127.0.0.1:8080",
        "http://127.0.0.1:8080.evil.example",
    ])
    func anyOtherOriginIsRefused(origin: String) {
        #expect(!OriginPolicy().admits(origin: origin, host: "127.0.0.1:8080"))
        #expect(!OriginPolicy().admits(origin: origin, host: nil))
    }

    @Test func theAllowListAddsOriginsAndStarAdmitsAll() {
        let policy = OriginPolicy(allowed: ["https://Game.Example.com/"])
        #expect(policy.admits(origin: "https://game.example.com", host: "127.0.0.1:8080"))
        #expect(!policy.admits(origin: "https://other.example.com", host: "127.0.0.1:8080"))
        #expect(OriginPolicy(allowed: ["*"]).admits(origin: "http://anything.example", host: "x"))
    }
}
