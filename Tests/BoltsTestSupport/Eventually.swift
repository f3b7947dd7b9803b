import Dispatch
import Foundation

// Polling for a condition that another thread makes true "soon" (a worker releases a closure
// just after running it, a server notices a hang-up): the one home of these waits for every
// test target, so that they all give a late condition the same grace.

/// Polls `condition` every 10 ms until it holds or `seconds` pass; returns whether it held.
///
/// Only time in which the waiter gets to run counts against `seconds`. In a full test run the
/// cooperative threads can all be busy with other suites' synchronous tests for tens of seconds
/// (40 s was seen on a 2-CPU machine), so one 10 ms sleep may end far later; such a stall uses
/// up at most 100 ms of the budget, and the condition is checked again after it before giving
/// up. The default is generous on purpose: only a test that is about to fail waits that long.
package func eventually(within seconds: Double = 180, _ condition: () -> Bool) async -> Bool {
    var waited = 0.0
    while !condition() {
        if waited >= seconds { return false }
        let start = DispatchTime.now().uptimeNanoseconds
        try? await _Concurrency.Task.sleep(nanoseconds: 10_000_000)
        waited += min(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9, 0.1)
    }
    return true
}

/// Polls `condition` every millisecond, blocking the calling thread, until it holds or `seconds`
/// of wall-clock time pass; returns its last value. For synchronous tests; async code gets the
/// `async` overload, which does not hold a cooperative thread.
package func eventually(within seconds: Double, _ condition: () -> Bool) -> Bool {
    let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(seconds * 1e9)
    while DispatchTime.now().uptimeNanoseconds < deadline {
        if condition() { return true }
        usleep(1_000)
    }
    return condition()
}
