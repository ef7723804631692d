// libFuzzer entry point for the swarm-script loader, built by `make fuzz` through the fuzz-only package in
// Tests/Fuzz/ScriptFuzz (the loader, Yams and every protocol's option decoders, instrumented with
// -sanitize=fuzzer,address). The vocabulary is the one `skirmish swarm` loads with: SNAP, ENet and DDNet.
//
// Oracles: any bytes either load as a script or fail with a located ScriptError — never a trap, a hang, an
// out-of-bounds read (AddressSanitizer watches) or unbounded memory (libFuzzer's -rss_limit_mb). A script that loads
// loads again, identically, from its own text (the loader is deterministic).

import SkirmishDDNet
import SkirmishENet
import SkirmishScript
import SkirmishSwarm

/// SNAP's, ENet's and DDNet's options and behaviours, as `Catalogue.standard` registers them in the command.
let loader: ScriptLoader = {
    var catalogue = Catalogue.builtIn
    catalogue.registerDDNet()
    catalogue.registerENet()
    return catalogue.scriptLoader
}()

/// Called by libFuzzer with each generated input (`size` bytes at `data`); returns 0, or traps on a broken oracle.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzScript(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let first: Script
    do {
        first = try loader.parse(text, file: "fuzz.yaml")
    } catch {
        // A rejection must say where and what: a line inside the text (0 for file-level problems) and a message.
        guard error.line >= 0, error.line <= text.utf8.count + 1, !error.message.isEmpty else {
            fatalError("a rejection without a location or a message: \(error)")
        }
        return 0
    }
    guard let again = try? loader.parse(text, file: "fuzz.yaml"), again == first else {
        fatalError("the same text loaded differently the second time")
    }
    return 0
}
