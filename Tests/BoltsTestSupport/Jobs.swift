import Dispatch

/// Submits `count` jobs to `execute`, each running `body` and then leaving one group, and
/// returns the group.
package func submitJobs(_ count: Int, to execute: (@escaping @Sendable () -> Void) -> Void, _ body: @escaping @Sendable () -> Void) -> DispatchGroup {
    let group = DispatchGroup()
    for _ in 0..<count {
        group.enter()
        execute {
            body()
            group.leave()
        }
    }
    return group
}
