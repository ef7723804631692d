import SkirmishWire

/// What `skirmish --version` prints: the tool's release and the wire protocol version its bots and server speak.
///
/// The release is bumped by hand with each tagged release; the protocol version comes from `SkirmishWire`, so a
/// report that quotes `--version` says which servers the build can talk to.
enum Version {
    static let release = "0.17.0"

    static var text: String { "skirmish \(release) (wire protocol \(Hello.currentVersion))" }
}
