import SkirmishNet

/// The practice page: Puck in a browser, against an AI opponent or whoever else joins the table.
///
/// One HTML file with its script and styles inline (no build step, no fonts or scripts from elsewhere, so it works
/// offline), compiled into the binary with SwiftPM's `embedInCode` resources: there is no bundle to look up at run
/// time. The page speaks the wire protocol over the server's WebSocket endpoint. It first asks `GET /play/match` for
/// a match to join (the practice command answers with a fresh AI opponent's match, its difficulty and optionally the
/// game server's WebSocket URL); where that route is missing, as under a plain `skirmish serve`, it joins any open
/// Puck table at `/ws` on the host that served it, so two people can play each other.
public enum PracticePage {
    /// Where the page is served.
    public static let path = "/play"
    /// Where the page asks for a match to join.
    public static let matchPath = "/play/match"

    /// The page's bytes (UTF-8 HTML).
    public static var html: [UInt8] { PackageResources.play_html }

    /// The `GET /play` route.
    public static var route: HTTPServer.Route {
        .fixed(PackageResources.play_html, contentType: "text/html; charset=utf-8")
    }
}
