import Dispatch

/// About `nanoseconds` of busy work on the calling thread: a job that computes for that
/// long, which the pool never takes for blocked (it keeps its CPU, or waits for one).
package func busy(nanoseconds: UInt64) {
    let end = DispatchTime.now().uptimeNanoseconds + nanoseconds
    while DispatchTime.now().uptimeNanoseconds < end {}
}
