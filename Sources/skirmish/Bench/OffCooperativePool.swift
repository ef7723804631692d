import Foundation

/// Runs blocking work (joining the exporter's threads) on a thread of its own, never on the cooperative pool.
///
/// `serve` and `swarm` use it; it stays in the executable until those commands move under swift-service-lifecycle.
func offCooperativePool(_ body: @escaping @Sendable () -> Void) async {
    await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
        Thread {
            body()
            done.resume()
        }.start()
    }
}
